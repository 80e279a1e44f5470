import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { Agent } from "../src/index.js"
import { awaitSleepers, emulated } from "./fixtures.js"
import { type Delays, events, handlers, model, toolkit } from "./tools.js"

const user = (content: string): Protocol.Message => ({ role: "user", content })

const setup = (delays?: Delays) => Effect.provide(Layer.merge(emulated(), handlers(delays)))

const collect = (messages: ReadonlyArray<Protocol.Message>) =>
  Stream.runCollect(Agent.stream({ model, toolkit, messages }))

describe("Agent.stream", () => {
  it.effect("emits tool calls, results, steps, text deltas and the result", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(collect([user("Use get_weather and get_time for Paris")]))
      yield* awaitSleepers(1, 200)
      yield* awaitSleepers(1, 100)
      yield* TestClock.adjust("100 millis")
      yield* awaitSleepers(1, 100)
      yield* TestClock.adjust("100 millis")
      const all = yield* Fiber.join(fiber)
      const tags = all.map((e) => e._tag).filter((tag, i, list) => tag !== "TextDelta" || list[i - 1] !== "TextDelta")
      expect(tags).toEqual([
        "ToolCallStarted",
        "ToolCallStarted",
        "ToolResult",
        "ToolResult",
        "StepFinished",
        "TextDelta",
        "StepFinished",
        "Finished"
      ])
      // Results are reported as they finish; the transcript keeps call order.
      const finished = all.flatMap((e) => (e._tag === "ToolResult" ? [e.result.name] : []))
      expect(finished).toEqual(["get_time", "get_weather"])
      const last = all.at(-1)
      if (last?._tag !== "Finished") throw new Error("no Finished event")
      const result = last.result
      expect(result.status).toBe("completed")
      expect(result.steps[0]!.message.tool_calls?.map((c) => c.function.name)).toEqual(["get_weather", "get_time"])
      expect(result.transcript.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []))).toEqual(
        result.steps[0]!.message.tool_calls?.map((c) => c.id)
      )
      const text = all.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")
      expect(text).toBe(result.text)
      expect(text).toContain("get_weather →")
      expect(all.filter((e) => e._tag === "TextDelta").length).toBeGreaterThan(1)
      expect(result.usage.total_tokens).toBeGreaterThan(0)
    }).pipe(setup({ get_weather: "200 millis", get_time: "100 millis" })))

  it.effect("fails with the run's typed error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Stream.runDrain(
          Agent.stream({ model, toolkit, maxSteps: 1, messages: [user("Use get_time then get_weather")] })
        )
      )
      expect(error._tag).toBe("MaxStepsExceeded")
    }).pipe(setup()))

  it.effect("taking fewer events than the run has interrupts the run", () =>
    Effect.gen(function*() {
      const first = yield* Stream.runCollect(
        Agent.stream({ model, toolkit, messages: [user("Use get_weather")] }).pipe(Stream.take(1))
      )
      expect(first.map((e) => e._tag)).toEqual(["ToolCallStarted"])
      // The handler sleeps 1 s on the TestClock: it was interrupted, never finished.
      expect((yield* events).filter((e) => e.phase === "end")).toEqual([])
    }).pipe(setup({ get_weather: "1 second" })))
})
