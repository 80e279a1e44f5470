/**
 * The agent against nonsense limits and a misbehaving model (issue 14), over
 * HTTP to the emulator.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import { Emulator } from "@switchboard/emulator"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { Agent } from "../src/index.js"
import { emulated, mapCalls, withModel } from "./fixtures.js"
import { handlers, model, toolkit } from "./tools.js"

const user = (content: string): Protocol.Message => ({ role: "user", content })

describe("limits that make no sense are refused before any call", () => {
  const cases: ReadonlyArray<readonly [string, Partial<Agent.RunOptions<typeof toolkit.tools>>, string]> = [
    ["maxSteps 0", { maxSteps: 0 }, "maxSteps"],
    ["maxSteps NaN", { maxSteps: NaN }, "maxSteps"],
    ["loopLimit 0", { loopLimit: 0 }, "loopLimit"],
    ["concurrency 0", { concurrency: 0 }, "concurrency"],
    ["a negative duration budget", { budget: { duration: -1 } }, "budget.duration"],
    ["a NaN duration budget", { budget: { duration: NaN } }, "budget.duration"],
    ["a negative token budget", { budget: { totalTokens: -5 } }, "budget.totalTokens"]
  ]
  for (const [name, options, field] of cases) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Agent.run({ model, toolkit, messages: [user("Use get_weather")], ...options }))
        expect(error).toMatchObject({ _tag: "ConfigurationError", field })
        expect(yield* Effect.flatMap(Emulator.Emulator, (e) => e.requestCount)).toBe(0)
      }).pipe(Effect.provide(emulated()), Effect.provide(handlers())))
  }
})

describe("a misbehaving model", () => {
  it.effect("budget.duration bounds the whole run, a tool that hangs included", () =>
    Effect.gen(function*() {
      const Hang = Tool.make("hang", { description: "Never returns", success: Schema.String })
      const started = yield* Deferred.make<void>()
      const finalized = yield* Ref.make(false)
      const kit = Toolkit.make(Hang)
      const live = kit.toLayer({
        hang: () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never).pipe(Effect.ensuring(Ref.set(finalized, true)))
      })
      const fiber = yield* Effect.forkChild(
        Agent.run({ model, toolkit: kit, budget: { duration: "30 seconds" }, messages: [user("Use hang")] }).pipe(Effect.provide(live))
      )
      yield* Deferred.await(started)
      yield* TestClock.adjust("30 seconds")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({ _tag: "BudgetExceeded", limit: "duration", max: 30_000 })
      expect(error._tag === "BudgetExceeded" && error.transcript.map((m) => m.role)).toEqual(["user", "assistant"])
      expect(yield* Ref.get(finalized)).toBe(true)
    }).pipe(Effect.provide(emulated())))

  it.effect("tool calls with empty or repeated ids are answered, and the next model call works", () =>
    Effect.gen(function*() {
      const result = yield* Agent.run({ model, toolkit, messages: [user("Use get_weather and get_time")] }).pipe(
        withModel((_request, completion) => mapCalls(completion, (calls) => calls.map((call, i) => ({ ...call, id: i === 0 ? "" : "" }))))
      )
      expect(result.status).toBe("completed")
      const assistant = result.transcript[1]
      expect(assistant?.role === "assistant" && assistant.tool_calls?.map((c) => c.id)).toEqual(["call_0_0", "call_0_1"])
      expect(result.transcript.filter((m) => m.role === "tool").map((m) => m.role === "tool" && m.tool_call_id)).toEqual(["call_0_0", "call_0_1"])
    }).pipe(Effect.provide(emulated()), Effect.provide(handlers())))

  it.effect("arguments nested 3,000 levels deep go back to the model as invalid, no crash", () =>
    Effect.gen(function*() {
      const deep = `{"city":${"[".repeat(3000)}${"]".repeat(3000)}}`
      const result = yield* Agent.run({ model, toolkit, stopWhen: Agent.stepCountIs(1), messages: [user("Use get_weather for Paris")] }).pipe(
        withModel((_request, completion) => mapCalls(completion, (calls) => calls.map((call) => ({ ...call, function: { ...call.function, arguments: deep } }))))
      )
      expect(result.steps[0]!.toolResults[0]).toMatchObject({ outcome: "invalid-arguments" })
      expect(result.steps[0]!.toolResults[0]!.content).toContain("deeper than 128 levels")
    }).pipe(Effect.provide(emulated()), Effect.provide(handlers())))

  it.effect("a tool name or parameters the service would refuse, or a bad timeout, is a ConfigurationError naming it before any call", () =>
    Effect.gen(function*() {
      const spaced = Toolkit.make(Tool.make("get weather", { description: "" }))
      const named = yield* Effect.flip(Agent.run({ model, toolkit: spaced, messages: [user("Use get_weather")] })).pipe(
        Effect.provide(spaced.toLayer({ "get weather": () => Effect.void }))
      )
      expect(named).toMatchObject({ _tag: "ConfigurationError", field: "toolkit.tools.get weather" })
      expect(named.message).toMatch(/must be 1-64 letters/)
      const negative = Toolkit.make(Tool.make("wait").annotate(Agent.ToolTimeout, -1))
      const timeout = yield* Effect.flip(Agent.run({ model, toolkit: negative, messages: [user("Use wait")] })).pipe(
        Effect.provide(negative.toLayer({ wait: () => Effect.void }))
      )
      expect(timeout).toMatchObject({ _tag: "ConfigurationError" })
      expect(timeout.message).toContain("wait")
      // An empty Struct's JSON Schema is "anything but null", which the service refuses for parameters.
      const anything = Toolkit.make(Tool.make("ping", { parameters: Schema.Struct({}) }))
      const parameters = yield* Effect.flip(Agent.run({ model, toolkit: anything, messages: [user("Use ping")] })).pipe(
        Effect.provide(anything.toLayer({ ping: () => Effect.void }))
      )
      expect(parameters).toMatchObject({ _tag: "ConfigurationError", field: "toolkit.tools.ping" })
      expect(yield* Effect.flatMap(Emulator.Emulator, (e) => e.requestCount)).toBe(0)
    }).pipe(Effect.provide(emulated())))

  it.effect("__proto__ in arguments never reaches a handler's prototype", () =>
    Effect.gen(function*() {
      const Configure = Tool.make("configure", {
        description: "Sets options",
        parameters: Schema.Struct({ opts: Schema.Record(Schema.String, Schema.Unknown) }),
        success: Schema.String
      })
      const kit = Toolkit.make(Configure)
      const seen = yield* Ref.make<ReadonlyArray<unknown>>([])
      const live = kit.toLayer({
        configure: ({ opts }) =>
          Effect.as(Ref.set(seen, [(opts as { isAdmin?: unknown }).isAdmin, Object.getPrototypeOf(opts) === Object.prototype]), "ok")
      })
      yield* Agent.run({ model, toolkit: kit, stopWhen: Agent.stepCountIs(1), messages: [user("Use configure")] }).pipe(
        withModel((_request, completion) =>
          mapCalls(completion, (calls) =>
            calls.map((call) => ({ ...call, function: { ...call.function, arguments: `{"opts":{"__proto__":{"isAdmin":true},"a":1}}` } })))),
        Effect.provide(live)
      )
      expect(yield* Ref.get(seen)).toEqual([undefined, true])
    }).pipe(Effect.provide(emulated())))
})
