import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Agent, AgentError, type Transcript } from "../src/index.js"
import { emulated, withModel } from "./fixtures.js"
import { handlers, model, toolkit } from "./tools.js"

const user = (content: string): Protocol.Message => ({ role: "user", content })

const setup = Effect.provide(Layer.merge(emulated(), handlers()))

/** The chat request bodies the emulator received, in order. */
const sent = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) =>
  requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body as Protocol.ChatRequest))

const sumTokens = (steps: ReadonlyArray<Agent.Step>) => steps.reduce((n, step) => n + (step.usage?.total_tokens ?? 0), 0)

describe("output: a schema for the run's answer", () => {
  const Report = Schema.Struct({
    summary: Schema.String,
    readings: Schema.Array(Schema.Struct({ city: Schema.String, celsius: Schema.Finite }))
  })

  it.effect("ends with a decoded value from a forced respond call after the answer", () =>
    Effect.gen(function*() {
      const result = yield* Agent.run({ model, toolkit, output: Report, messages: [user("Use get_weather for Paris")] })
      expect(result.status).toBe("completed")
      expect(Schema.is(Report)(result.output)).toBe(true)
      expect(result.output?.readings).toHaveLength(1)
      // tool step, answer, output step; the transcript still ends with the answer.
      expect(result.steps).toHaveLength(3)
      expect(result.transcript.at(-1)).toEqual(result.steps[1]!.message)
      expect(result.text).toContain("Tool results:")
      expect(result.usage.total_tokens).toBe(sumTokens(result.steps))
      const last = (yield* sent).at(-1)!
      expect(last.tool_choice).toEqual({ type: "function", function: { name: "respond" } })
      expect(last.tools?.map((t) => t.function.name)).toEqual([...Object.keys(toolkit.tools), "respond"])
    }).pipe(setup))

  it.effect("Agent.stream ends with the same output in its Finished event", () =>
    Effect.gen(function*() {
      const options = { model, toolkit, output: Report, messages: [user("Use get_weather for Paris")] }
      const ran = yield* Agent.run(options)
      const events = yield* Stream.runCollect(Agent.stream(options))
      const last = events.at(-1)
      expect(last?._tag === "Finished" && last.result.output).toEqual(ran.output)
      expect(events.filter((e) => e._tag === "StepFinished").length).toBe(3)
    }).pipe(setup))

  it.effect("a value that does not decode fails with StructuredOutputError", () =>
    Effect.gen(function*() {
      const Code = Schema.Struct({ code: Schema.String.check(Schema.isPattern(/^[A-Z]{3}$/)) })
      const error = yield* Effect.flip(Agent.run({ model, toolkit, output: Code, messages: [user("Hi")] }))
      expect(error._tag).toBe("StructuredOutputError")
    }).pipe(setup))
})

describe("token budget and usage", () => {
  const ask = [user(`Use delete_file({"path": "/tmp/a.txt"})`)]

  it.effect("usage is summed across resume, and the budget counts the earlier usage", () =>
    Effect.gen(function*() {
      const paused = yield* Agent.run({ model, toolkit, messages: ask })
      expect(paused.usage.total_tokens).toBeGreaterThan(0)
      const decisions = { [paused.pending[0]!.approvalId]: "approve" as const }
      const done = yield* Agent.resume({ model, toolkit, transcript: paused.transcript, decisions, usage: paused.usage })
      expect(done.usage.total_tokens).toBe(paused.usage.total_tokens + sumTokens(done.steps))
      const over = yield* Effect.flip(
        Agent.resume({
          model,
          toolkit,
          transcript: paused.transcript,
          decisions,
          usage: paused.usage,
          budget: { totalTokens: paused.usage.total_tokens }
        })
      )
      expect(over).toMatchObject({ _tag: "BudgetExceeded", limit: "totalTokens", used: paused.usage.total_tokens })
    }).pipe(setup))

  it.effect("a service that sends no usage: the budget counts an estimate, reported on the step", () =>
    Effect.gen(function*() {
      const noUsage = withModel((_, completion) => ({ ...completion, usage: null }))
      const result = yield* Agent.run({ model, toolkit, budget: { totalTokens: 100_000 }, messages: [user("Use get_weather")] })
        .pipe(noUsage)
      expect(result.steps.every((s) => s.usage === undefined && s.tokens.estimated && s.tokens.total > 0)).toBe(true)
      const first = result.steps[0]!.tokens.total
      const error = yield* Effect.flip(
        Agent.run({ model, toolkit, budget: { totalTokens: first }, messages: [user("Use get_weather")] }).pipe(noUsage)
      )
      expect(error).toMatchObject({ _tag: "BudgetExceeded", limit: "totalTokens", used: first })
    }).pipe(setup))

  it.effect("max_tokens is clamped to what the budget has left", () =>
    Effect.gen(function*() {
      const result = yield* Agent.run({
        model,
        toolkit,
        maxTokens: 500,
        budget: { totalTokens: 1000 },
        messages: [user("Use get_weather")]
      })
      const [first, second] = yield* sent
      expect(first!.max_tokens).toBe(500)
      expect(second!.max_tokens).toBe(Math.min(500, 1000 - result.steps[0]!.usage!.total_tokens))
      const tight = result.steps[0]!.usage!.total_tokens + 3
      const clamped = yield* Agent.run({ model, toolkit, budget: { totalTokens: tight }, messages: [user("Use get_weather")] })
      expect((yield* sent).at(-1)!.max_tokens).toBe(3)
      expect(clamped.steps.at(-1)!.message.content!.split(/\s+/)).toHaveLength(3)
    }).pipe(setup))
})

describe("prepareStep and onStep", () => {
  it.effect("prepareStep changes the model, tools and tool choice of a step", () =>
    Effect.gen(function*() {
      const contexts: Array<Agent.StepContext> = []
      yield* Agent.run({
        model,
        toolkit,
        messages: [user("Use get_weather")],
        prepareStep: (context) =>
          Effect.sync(() => {
            contexts.push(context)
            return context.index === 0 ? {} : { model: "gpt-4o", tools: context.tools.slice(0, 1), toolChoice: "none" }
          })
      })
      const [first, second] = yield* sent
      expect([first!.model, second!.model]).toEqual([model, "gpt-4o"])
      expect(second!.tools?.map((t) => t.function.name)).toEqual(["get_weather"])
      expect(second!.tool_choice).toBe("none")
      expect(contexts.map((c) => [c.index, c.transcript.length, c.steps.length])).toEqual([[0, 1, 0], [1, 3, 1]])
    }).pipe(setup))

  it.effect("onStep sees each step with the transcript so far; a checkpoint resumes", () =>
    Effect.gen(function*() {
      const saved = yield* Ref.make<ReadonlyArray<readonly [number, Transcript.Transcript]>>([])
      const result = yield* Agent.run({
        model,
        toolkit,
        messages: [user("Use get_weather then get_time")],
        onStep: (step, transcript) => Ref.update(saved, (all) => [...all, [step.index, transcript] as const])
      })
      const checkpoints = yield* Ref.get(saved)
      expect(checkpoints.map(([index]) => index)).toEqual([0, 1, 2])
      expect(checkpoints.at(-1)![1]).toEqual(result.transcript)
      // A crash after step 0: resuming from its checkpoint ends as the run did.
      const resumed = yield* Agent.resume({ model, toolkit, transcript: checkpoints[0]![1] })
      expect(resumed.transcript).toEqual(result.transcript)
    }).pipe(setup))
})

describe("guards: checks of the caller's after the built-in ones", () => {
  it.effect("see the run before each model call and before a reply's tools run, and can end it", () =>
    Effect.gen(function*() {
      const seen: Array<{ modelCalls: number; calls: ReadonlyArray<string> }> = []
      const noGetTime: Agent.Guard = (state) => {
        seen.push({ modelCalls: state.modelCalls, calls: state.calls.map((c) => c.function.name) })
        return state.calls.some((c) => c.function.name === "get_time") ?
          Effect.fail(new AgentError.BudgetExceeded({ limit: "toolCalls", max: 0, used: 1, transcript: state.transcript })) :
          Effect.void
      }
      const error = yield* Effect.flip(
        Agent.run({ model, toolkit, guards: [noGetTime], messages: [user("Use get_weather then get_time then get_weather")] })
      )
      expect(error._tag).toBe("BudgetExceeded")
      // Before call 1, after its reply (get_weather), before call 2, after its reply (get_time): stopped there.
      expect(seen).toEqual([
        { modelCalls: 0, calls: [] },
        { modelCalls: 1, calls: ["get_weather"] },
        { modelCalls: 1, calls: [] },
        { modelCalls: 2, calls: ["get_time"] }
      ])
      // get_time never ran: the transcript ends with the reply that asked for it.
      expect(error._tag === "BudgetExceeded" && error.transcript.at(-1)?.role).toBe("assistant")
    }).pipe(setup))

  it.effect("run after the built-in ones: maxSteps still ends the run first", () =>
    Effect.gen(function*() {
      let called = 0
      const error = yield* Effect.flip(Agent.run({
        model,
        toolkit,
        maxSteps: 1,
        guards: [() => Effect.sync(() => void called++)],
        messages: [user("Use get_weather then get_time then get_weather")]
      }))
      expect(error._tag).toBe("MaxStepsExceeded")
      // Before call 1 and after its reply; the check before call 2 stopped at maxSteps.
      expect(called).toBe(2)
    }).pipe(setup))
})
