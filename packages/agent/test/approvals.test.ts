/**
 * Approvals that cannot be bypassed (issue 33, case 1), over real HTTP from a
 * `node:http` server that names its calls as an attacker would: a call id or
 * tool name that is a member of `Object.prototype` finds no decision, and a
 * decision holds for the call, name and arguments the approver saw, nothing
 * else.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import { NodeSwitchboard } from "@switchboard/node"
import { json, serve } from "@switchboard/test-support/Hostile"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { Agent, type AgentError } from "../src/index.js"
import { DeleteFile, model } from "./tools.js"

const kit = Toolkit.make(DeleteFile)

const call = (id: string, path = "/tmp/a"): Protocol.ToolCall => ({
  id,
  type: "function",
  function: { name: "delete_file", arguments: JSON.stringify({ path }) }
})

/** The first request gets `calls`; later ones "done". */
const service = (calls: ReadonlyArray<Protocol.ToolCall>) => {
  let n = 0
  return serve((_request, response) =>
    json(response, 200, {
      id: "x",
      choices: [{
        index: 0,
        finish_reason: n++ === 0 ? "tool_calls" : "stop",
        message: n === 1 ? { role: "assistant", content: null, tool_calls: calls } : { role: "assistant", content: "done" }
      }]
    })
  )
}

/** Runs `use` against `calls`, with handlers that record each deletion. */
const against = <A, E>(
  calls: ReadonlyArray<Protocol.ToolCall>,
  use: (deleted: Effect.Effect<ReadonlyArray<string>>) => Effect.Effect<A, E, Agent.Requirements<typeof kit.tools>>
) =>
  Effect.scoped(Effect.gen(function*() {
    const hostile = yield* service(calls)
    const deleted = yield* Ref.make<ReadonlyArray<string>>([])
    const live = kit.toLayer({
      delete_file: ({ path }) => Effect.as(Ref.update(deleted, (all) => [...all, path]), { deleted: path })
    })
    return yield* use(Ref.get(deleted)).pipe(
      Effect.provide(Layer.merge(live, Layer.orDie(NodeSwitchboard.layer({ baseUrl: hostile.url, apiKey: "sk-test", maxRetries: 0 }))))
    )
  }))

const inherited = ["constructor", "toString", "__proto__", "valueOf", "hasOwnProperty"]

const ask = [{ role: "user" as const, content: "Delete it" }]

describe("a call named like a member of Object.prototype", () => {
  for (const id of inherited) {
    it.live(`run: a needsApproval call with id ${id} pauses and does not run`, () =>
      against([call(id)], (deleted) =>
        Effect.gen(function*() {
          const result = yield* Agent.run({ model, toolkit: kit, messages: ask })
          expect(result.status).toBe("paused")
          expect(result.pending.map((p) => p.callId)).toEqual([id])
          expect(yield* deleted).toEqual([])
        })))

    it.live(`resume: a transcript whose open call has id ${id}, without decisions, pauses and does not run`, () =>
      against([], (deleted) =>
        Effect.gen(function*() {
          const transcript: ReadonlyArray<Protocol.Message> = [...ask, { role: "assistant", content: null, tool_calls: [call(id)] }]
          const result = yield* Agent.resume({ model, toolkit: kit, transcript, decisions: {} })
          expect(result.status).toBe("paused")
          expect(yield* deleted).toEqual([])
        })))
  }
})

describe("a tool name like a member of Object.prototype", () => {
  for (const name of inherited) {
    it.live(`a call of the tool ${name}: an unknown tool, told to the model; nothing runs`, () =>
      against([{ id: "call_1", type: "function", function: { name, arguments: "{}" } }], (deleted) =>
        Effect.gen(function*() {
          const result = yield* Agent.run({ model, toolkit: kit, messages: ask })
          expect(result.steps[0]!.toolResults[0]).toMatchObject({ name, outcome: "unknown-tool" })
          expect(yield* deleted).toEqual([])
        })))
  }
})

describe("a decision binds to the call the approver saw", () => {
  it.live("approved by its approval id, the call runs once", () =>
    against([call("call_1")], (deleted) =>
      Effect.gen(function*() {
        const paused = yield* Agent.run({ model, toolkit: kit, messages: ask })
        const done = yield* Agent.resume({
          model,
          toolkit: kit,
          transcript: paused.transcript,
          decisions: { [paused.pending[0]!.approvalId]: "approve" }
        })
        expect(done.status).toBe("completed")
        expect(yield* deleted).toEqual(["/tmp/a"])
      })))

  it.live("a decision keyed by the call id alone fails with DecisionMismatch; nothing runs", () =>
    against([call("call_1")], (deleted) =>
      Effect.gen(function*() {
        const paused = yield* Agent.run({ model, toolkit: kit, messages: ask })
        const error = yield* Effect.flip(
          Agent.resume({ model, toolkit: kit, transcript: paused.transcript, decisions: { call_1: "approve" } })
        )
        expect(error).toMatchObject({ _tag: "DecisionMismatch", approvalId: "call_1" })
        expect(yield* deleted).toEqual([])
      })))

  it.live("the same call id with other arguments than those approved: DecisionMismatch, nothing runs", () =>
    against([call("call_1", "/tmp/a")], (deleted) =>
      Effect.gen(function*() {
        const paused = yield* Agent.run({ model, toolkit: kit, messages: ask })
        const approved = paused.pending[0]!.approvalId
        // The stored transcript, changed between the approval and the resume.
        const swapped = paused.transcript.map((m): Protocol.Message =>
          m.role === "assistant" && m.tool_calls ? { ...m, tool_calls: [call("call_1", "/etc/passwd")] } : m
        )
        const error = yield* Effect.flip(
          Agent.resume({ model, toolkit: kit, transcript: swapped, decisions: { [approved]: "approve" } })
        )
        expect((error as AgentError.AgentError)._tag).toBe("DecisionMismatch")
        expect(yield* deleted).toEqual([])
      })))

  it.live("spacing and key order of the arguments do not change the approval id", () =>
    Effect.gen(function*() {
      const a = yield* Agent.approvalId({ id: "c", type: "function", function: { name: "f", arguments: `{"a":1,"b":[2]}` } })
      const b = yield* Agent.approvalId({ id: "c", type: "function", function: { name: "f", arguments: ` { "b": [2], "a": 1 }` } })
      const other = yield* Agent.approvalId({ id: "c", type: "function", function: { name: "g", arguments: `{"a":1,"b":[2]}` } })
      expect(a).toBe(b)
      expect(other).not.toBe(a)
    }))

  it.live("a denial with a reason tells the model the reason; the call does not run", () =>
    against([call("call_1")], (deleted) =>
      Effect.gen(function*() {
        const paused = yield* Agent.run({ model, toolkit: kit, messages: ask })
        const done = yield* Agent.resume({
          model,
          toolkit: kit,
          transcript: paused.transcript,
          decisions: { [paused.pending[0]!.approvalId]: { approved: false, reason: "not that file" } }
        })
        expect(done.steps[0]!.toolResults[0]).toMatchObject({
          outcome: "denied",
          content: JSON.stringify({ error: "the user denied this call to delete_file; it did not run: not that file" })
        })
        expect(yield* deleted).toEqual([])
      })))

  it.live("an approval given again once its call has run is refused: it cannot be replayed", () =>
    against([call("call_1")], (deleted) =>
      Effect.gen(function*() {
        const paused = yield* Agent.run({ model, toolkit: kit, messages: ask })
        const decisions = { [paused.pending[0]!.approvalId]: "approve" as const }
        // The call ran; the model's next reply asks for nothing.
        const done = yield* Agent.resume({ model, toolkit: kit, transcript: paused.transcript, decisions, maxSteps: 1 })
        expect(yield* deleted).toEqual(["/tmp/a"])
        const error = yield* Effect.flip(Agent.resume({ model, toolkit: kit, transcript: done.transcript, decisions }))
        expect(error._tag).toBe("DecisionMismatch")
        expect(yield* deleted).toEqual(["/tmp/a"])
      })))
})
