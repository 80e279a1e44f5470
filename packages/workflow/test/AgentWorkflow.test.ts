/**
 * The agent workflow on the in-memory engine, against the emulator over real
 * HTTP: model and tool calls as activities, a pause for approval given with
 * `decide`, and a replay that repeats nothing that finished.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import { json, serve } from "@switchboard/test-support/Hostile"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import { AgentWorkflow } from "../src/index.js"
import { drive, emulated, requestsTo } from "./fixtures.js"

const DeleteFile = Tool.make("delete_file", {
  description: "Deletes a file",
  parameters: Schema.Struct({ path: Schema.String.annotate({ description: "File path" }) }),
  success: Schema.Struct({ deleted: Schema.String }),
  needsApproval: true
})
const GetTime = Tool.make("get_time", {
  description: "Local time in a time zone",
  parameters: Schema.Struct({ zone: Schema.String.annotate({ description: "IANA zone" }) }),
  success: Schema.String
})
const toolkit = Toolkit.make(DeleteFile, GetTime)

const setup = <ROut, E>(service: Layer.Layer<ROut, E>) => Effect.gen(function*() {
  const ran = yield* Ref.make<ReadonlyArray<string>>([])
  const requests = yield* Ref.make<ReadonlyArray<AgentWorkflow.ApprovalRequest>>([])
  const agent = AgentWorkflow.make({
    name: "TestAgent",
    toolkit,
    onApproval: (request) => Ref.update(requests, (all) => [...all, request])
  })
  const handlers = toolkit.toLayer({
    delete_file: ({ path }) => Effect.as(Ref.update(ran, (all) => [...all, `delete_file ${path}`]), { deleted: path }),
    get_time: ({ zone }) => Effect.as(Ref.update(ran, (all) => [...all, `get_time ${zone}`]), "12:00")
  })
  const layer = agent.layer.pipe(Layer.provide(handlers), Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provideMerge(service))
  return { agent, ran, requests, layer }
})

/** Polls (every second of the TestClock, driven) until `done`. */
const until = <A, E, R>(poll: Effect.Effect<A, E, R>, done: (a: A) => boolean): Effect.Effect<A, E, R> => {
  const loop: Effect.Effect<A, E, R> = Effect.flatMap(poll, (a) =>
    done(a) ? Effect.succeed(a) : Effect.andThen(Effect.sleep("1 second"), Effect.suspend(() => loop)))
  return Effect.flatMap(Effect.forkChild(loop), drive)
}

describe("AgentWorkflow", () => {
  it.effect("runs tool calls as activities and finishes", () =>
    Effect.gen(function*() {
      const { agent, layer, ran } = yield* setup(emulated())
      yield* Effect.gen(function*() {
        const outcome = yield* Effect.flatMap(Effect.forkChild(agent.run("time-1", "gpt-4o-mini", [{ role: "user", content: `Use get_time({"zone": "Europe/Paris"})` }])), drive)
        expect(outcome.status).toBe("completed")
        expect(yield* Ref.get(ran)).toEqual(["get_time Europe/Paris"])
        expect(yield* requestsTo("/chat/completions")).toHaveLength(2)
        // The same key again: the stored run, nothing called again.
        const again = yield* Effect.flatMap(Effect.forkChild(agent.run("time-1", "gpt-4o-mini", [])), drive)
        expect(again).toEqual(outcome)
        expect(yield* requestsTo("/chat/completions")).toHaveLength(2)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("pauses for approval, tells onApproval once, and goes on after decide", () =>
    Effect.gen(function*() {
      const { agent, layer, ran, requests } = yield* setup(emulated())
      yield* Effect.gen(function*() {
        yield* agent.start("delete-1", "gpt-4o-mini", [{ role: "user", content: `Use delete_file({"path": "/tmp/a.txt"})` }])
        yield* until(agent.result("delete-1"), (r) => r?._tag === "Suspended")
        const [request] = yield* Ref.get(requests)
        expect(request?.pending.map((p) => p.name)).toEqual(["delete_file"])
        expect(yield* Ref.get(ran)).toEqual([])

        yield* agent.decide(request!.token, { [request!.pending[0]!.approvalId]: "approve" })
        const result = yield* until(agent.result("delete-1"), (r) => r?._tag === "Complete")
        expect(result?._tag === "Complete" && result.exit._tag === "Success" ? result.exit.value.status : undefined).toBe("completed")
        expect(yield* Ref.get(ran)).toEqual(["delete_file /tmp/a.txt"])
        expect(yield* Ref.get(requests)).toHaveLength(1)
        // The model call before the pause is not made again by the replay after it.
        expect(yield* requestsTo("/chat/completions")).toHaveLength(2)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("takes a toolkit that carries its handlers (Toolkit.WithHandler, as McpClient.toolkit gives)", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make<ReadonlyArray<string>>([])
      const bound = yield* toolkit.pipe(Effect.provide(toolkit.toLayer({
        delete_file: ({ path }) => Effect.as(Ref.update(ran, (all) => [...all, `delete_file ${path}`]), { deleted: path }),
        get_time: ({ zone }) => Effect.as(Ref.update(ran, (all) => [...all, `get_time ${zone}`]), "12:00")
      })))
      const agent = AgentWorkflow.make({ name: "BoundAgent", toolkit: bound })
      // No handler layer: the toolkit has them.
      const layer = agent.layer.pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provideMerge(emulated()))
      yield* Effect.gen(function*() {
        const run = agent.run("bound-1", "gpt-4o-mini", [{ role: "user", content: `Use get_time({"zone": "Asia/Tokyo"})` }])
        const outcome = yield* Effect.flatMap(Effect.forkChild(run), drive)
        expect(outcome.status).toBe("completed")
        expect(yield* Ref.get(ran)).toEqual(["get_time Asia/Tokyo"])
      }).pipe(Effect.provide(layer))
    }))

  it.effect("a token computed from the run's key decides nothing; the token onApproval got does", () =>
    Effect.gen(function*() {
      const { agent, layer, ran, requests } = yield* setup(emulated())
      yield* Effect.gen(function*() {
        yield* agent.start("delete-2", "gpt-4o-mini", [{ role: "user", content: `Use delete_file({"path": "/tmp/b.txt"})` }])
        yield* until(agent.result("delete-2"), (r) => r?._tag === "Suspended")
        const [request] = yield* Ref.get(requests)
        const approvalId = request!.pending[0]!.approvalId
        // What anyone who knows the key could compute: the wait's token as the engine derives it.
        const executionId = yield* agent.workflow.executionId({ key: "delete-2", model: "-", messages: [] })
        for (const name of ["approval-0", "approval-0-guess"]) {
          const forged = DurableDeferred.tokenFromExecutionId(DurableDeferred.make(name), { workflow: agent.workflow, executionId })
          expect(forged).not.toBe(request!.token)
          yield* agent.decide(forged, { [approvalId]: "approve" })
        }
        yield* until(agent.result("delete-2"), (r) => r?._tag === "Suspended")
        expect(yield* Ref.get(ran)).toEqual([])
        // A token that is no token at all is a typed error.
        expect(yield* Effect.flip(agent.decide("not a token", {}))).toMatchObject({ _tag: "InvalidRequestError", field: "token" })

        yield* agent.decide(request!.token, { [approvalId]: "approve" })
        yield* until(agent.result("delete-2"), (r) => r?._tag === "Complete")
        expect(yield* Ref.get(ran)).toEqual(["delete_file /tmp/b.txt"])
      }).pipe(Effect.provide(layer))
    }))

  it.effect("a call the service names constructor waits for a decision, and decided with none it waits again", () =>
    Effect.gen(function*() {
      const hostile = yield* constructorCalls
      const { agent, layer, ran, requests } = yield* setup(hostile)
      yield* Effect.gen(function*() {
        yield* agent.start("proto-1", "gpt-4o-mini", [{ role: "user", content: "Delete it" }])
        yield* until(agent.result("proto-1"), (r) => r?._tag === "Suspended")
        expect(yield* Ref.get(ran)).toEqual([])
        const [request] = yield* Ref.get(requests)
        expect(request?.pending.map((p) => p.callId)).toEqual(["constructor"])
        // The decoded decisions are empty: no inherited member stands in for one.
        yield* agent.decide(request!.token, {})
        yield* until(Ref.get(requests), (all) => all.length === 2)
        expect(yield* Ref.get(ran)).toEqual([])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped))
})

/** A service whose first reply calls delete_file with the id `constructor`, over real HTTP; `Chat` pointed at it. */
const constructorCalls = Effect.map(
  serve((_request, response) =>
    json(response, 200, {
      id: "x",
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "constructor", type: "function", function: { name: "delete_file", arguments: `{"path": "/etc/passwd"}` } }]
        }
      }]
    })
  ),
  (hostile) =>
    NodeSwitchboard.layer({ baseUrl: hostile.url, apiKey: "sk-test", maxRetries: 0 }).pipe(
      Layer.orDie,
      Layer.provideMerge(Emulator.layer()),
      Layer.provideMerge(RecordingClock.layer)
    )
)

