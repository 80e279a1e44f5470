/**
 * A toolkit that carries its handlers (`Toolkit.WithHandler`, as `yield*
 * toolkit` and `effect/ai`'s `McpClient.toolkit` give) runs like one whose
 * handlers are in the context: decoding, approvals, `ToolTimeout`,
 * `ToolRetry`, typed failures back to the model, all over real HTTP.
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import type * as Chat from "@switchboard/core/Chat"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { Agent } from "../src/index.js"
import { awaitSleepers, emulated } from "./fixtures.js"
import { DeleteFile, model, WeatherError } from "./tools.js"

const user = (content: string) => ({ role: "user" as const, content })

/** A tool as `McpClient.toolkit` makes one: a JSON Schema for parameters, failures as errors. */
const Lookup = Tool.dynamic("lookup", {
  description: "Looks a key up",
  parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  success: Schema.String,
  failure: WeatherError
})

const Weather = Tool.make("weather", {
  description: "Weather in a city",
  parameters: Schema.Struct({ city: Schema.String, days: Schema.optional(Schema.Int) }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite }),
  failure: WeatherError
})

/** The toolkit with its handlers bound, recording each call's parameters. */
const bound = Effect.gen(function*() {
  const seen = yield* Ref.make<ReadonlyArray<unknown>>([])
  const record = (params: unknown) => Ref.update(seen, (all) => [...all, params])
  const kit = Toolkit.make(Lookup, Weather, DeleteFile)
  const withHandler = yield* kit.pipe(Effect.provide(kit.toLayer({
    lookup: (params) => Effect.as(record(params), "found"),
    weather: (params) =>
      Effect.andThen(
        record(params),
        params.city === "Atlantis"
          ? Effect.fail(new WeatherError({ city: params.city, reason: "no such city" }))
          : Effect.succeed({ city: params.city, celsius: 20 })
      ),
    delete_file: (params) => Effect.as(record(params), { deleted: params.path })
  })))
  return { toolkit: withHandler, seen: Ref.get(seen) }
})

describe("a Toolkit.WithHandler", () => {
  it.effect("runs its handlers with the arguments decoded, typed failures going back to the model", () =>
    Effect.gen(function*() {
      const { seen, toolkit } = yield* bound
      const result = yield* Agent.run({
        model,
        toolkit,
        messages: [user(`Use lookup({"key": "a"}) and weather({"city": "Paris"}) and weather({"city": "Atlantis"})`)]
      })
      expect(result.status).toBe("completed")
      expect(result.steps[0]!.toolResults.map((r) => [r.name, r.outcome, r.content])).toEqual([
        ["lookup", "success", "found"],
        ["weather", "success", JSON.stringify({ city: "Paris", celsius: 20 })],
        ["weather", "failure", JSON.stringify({ error: { _tag: "WeatherError", city: "Atlantis", reason: "no such city" } })]
      ])
      expect(yield* seen).toEqual([{ key: "a" }, { city: "Paris" }, { city: "Atlantis" }])
    }).pipe(Effect.provide(emulated())))

  it.effect("arguments that fail the schema go back to the model and never reach the handler", () =>
    Effect.gen(function*() {
      const { seen, toolkit } = yield* bound
      const result = yield* Agent.run({
        model,
        toolkit,
        stopWhen: Agent.stepCountIs(1),
        messages: [user(`Use weather({"city": 3})`)]
      })
      expect(result.steps[0]!.toolResults[0]).toMatchObject({ name: "weather", outcome: "invalid-arguments" })
      expect(yield* seen).toEqual([])
    }).pipe(Effect.provide(emulated())))

  it.effect("a strict tool's nulls read back as absent before its handler sees them", () =>
    Effect.gen(function*() {
      const Strict = Weather.annotate(Tool.Strict, true)
      const kit = Toolkit.make(Strict)
      const seen = yield* Ref.make<unknown>(undefined)
      const toolkit = yield* kit.pipe(Effect.provide(kit.toLayer({
        weather: (params) => Effect.as(Ref.set(seen, params), { city: params.city, celsius: 1 })
      })))
      const result = yield* Agent.run({
        model,
        toolkit,
        stopWhen: Agent.stepCountIs(1),
        messages: [user(`Use weather({"city": "Oslo", "days": null})`)]
      })
      expect(result.steps[0]!.toolResults[0]).toMatchObject({ outcome: "success" })
      expect(yield* Ref.get(seen)).toEqual({ city: "Oslo" })
    }).pipe(Effect.provide(emulated())))

  it.effect("a tool that needs approval pauses the run; a denied call never runs, an approved one does", () =>
    Effect.gen(function*() {
      const { seen, toolkit } = yield* bound
      const ask = [user(`Use delete_file({"path": "/tmp/a"})`)]
      const paused = yield* Agent.run({ model, toolkit, messages: ask })
      expect(paused.status).toBe("paused")
      const callId = paused.pending[0]!.approvalId
      const denied = yield* Agent.resume({ model, toolkit, transcript: paused.transcript, decisions: { [callId]: "deny" } })
      expect(denied.steps[0]!.toolResults[0]!.outcome).toBe("denied")
      expect(yield* seen).toEqual([])
      const approved = yield* Agent.resume({ model, toolkit, transcript: paused.transcript, decisions: { [callId]: "approve" } })
      expect(approved.steps[0]!.toolResults[0]!.outcome).toBe("success")
      expect(yield* seen).toEqual([{ path: "/tmp/a" }])
    }).pipe(Effect.provide(emulated())))

  it.effect("ToolTimeout and ToolRetry apply", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make(0)
      const Sleepy = Tool.make("sleepy", { success: Schema.String }).annotate(Agent.ToolTimeout, "1 second")
      const Flaky = Tool.make("flaky", { success: Schema.String, failure: Schema.String }).annotate(
        Agent.ToolRetry,
        Schedule.recurs(2)
      )
      const kit = Toolkit.make(Sleepy, Flaky)
      const toolkit = yield* kit.pipe(Effect.provide(kit.toLayer({
        sleepy: () => Effect.as(Effect.sleep("1 minute"), "late"),
        flaky: () =>
          Effect.flatMap(Ref.updateAndGet(attempts, (n) => n + 1), (n) => (n < 3 ? Effect.fail("not yet") : Effect.succeed("ok")))
      })))
      const fiber = yield* Effect.forkChild(Agent.run({ model, toolkit, messages: [user("Use sleepy and flaky")] }))
      yield* awaitSleepers(1, 1000)
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      expect(result.steps[0]!.toolResults.map((r) => [r.name, r.outcome, r.content])).toEqual([
        ["sleepy", "timeout", JSON.stringify({ error: "sleepy timed out after 1s" })],
        ["flaky", "success", "ok"]
      ])
      expect(yield* Ref.get(attempts)).toBe(3)
    }).pipe(Effect.provide(emulated())))

  it.effect("Agent.stream takes one too", () =>
    Effect.gen(function*() {
      const { toolkit } = yield* bound
      const events = yield* Agent.stream({ model, toolkit, messages: [user(`Use lookup({"key": "b"})`)] }).pipe(
        Stream.runCollect,
        Effect.map((all) => all.map((e) => e._tag))
      )
      expect(events).toContain("ToolResult")
      expect(events.at(-1)).toBe("Finished")
    }).pipe(Effect.provide(emulated())))

  it("needs no handlers in the context, only the chat service", () => {
    const withHandler = {} as Toolkit.WithHandler<{ readonly lookup: typeof Lookup }>
    const _run = () => Agent.run({ model, toolkit: withHandler, messages: [] })
    expectTypeOf<Effect.Services<ReturnType<typeof _run>>>().toEqualTypeOf<Chat.Chat>()
    const kit = Toolkit.make(Lookup)
    const _plain = () => Agent.run({ model, toolkit: kit, messages: [] })
    expectTypeOf<Effect.Services<ReturnType<typeof _plain>>>().toEqualTypeOf<Chat.Chat | Tool.Handler<"lookup">>()
  })
})
