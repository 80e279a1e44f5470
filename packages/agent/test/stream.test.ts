import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { Agent } from "../src/index.js"
import { awaitSleepers, emulated, recordingSpans } from "./fixtures.js"
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

describe("a paused run streams on (issue 36)", () => {
  const ask = [user(`Use delete_file({"path": "/tmp/a.txt"})`)]

  it.effect("Agent.resumeStream: the resumed run's events, its usage carried, in the paused run's trace", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* recordingSpans(Effect.gen(function*() {
        const paused = yield* Agent.stream({ model, toolkit, messages: ask }).pipe(Agent.runForEach(() => Effect.void))
        expect(paused.status).toBe("paused")
        const [pending] = paused.pending
        // Typed per tool: `params` are delete_file's decoded parameters.
        if (pending?.name === "delete_file") expect(pending.params.path).toBe("/tmp/a.txt")
        const seen: Array<string> = []
        const done = yield* Agent.resumeStream({
          model,
          toolkit,
          transcript: paused.transcript,
          usage: paused.usage,
          trace: paused.trace,
          decisions: { [pending!.approvalId]: "approve" }
        }).pipe(Agent.runForEach((event) => Effect.sync(() => seen.push(event._tag))))
        expect(seen.filter((tag, i) => tag !== "TextDelta" || seen[i - 1] !== "TextDelta")).toEqual([
          "ToolCallStarted",
          "ToolResult",
          "StepFinished",
          "TextDelta",
          "StepFinished",
          "Finished"
        ])
        expect(done.status).toBe("completed")
        expect(done.steps[0]!.toolResults[0]).toMatchObject({ name: "delete_file", outcome: "success" })
        // The paused run's tokens go on in the resumed one's.
        expect(done.usage.total_tokens).toBe(paused.usage.total_tokens + done.steps[1]!.usage!.total_tokens)
        expect(done.trace.traceId).toBe(paused.trace.traceId)
        return { paused, done }
      }).pipe(Effect.withSpan("conversation", { root: true })))
      expect(Result.isSuccess(result)).toBe(true)
      const runs = spans.filter((s) => s.name === "invoke_agent")
      expect(runs).toHaveLength(2)
      // The resumed run is a child of the paused run's span: one trace.
      expect(Option.map(runs[1]!.parent, (p) => p.spanId)).toEqual(Option.some(runs[0]!.spanId))
      expect(new Set(runs.map((s) => s.traceId)).size).toBe(1)
    }).pipe(setup()))

  it.effect("the token budget counts the paused run's usage", () =>
    Effect.gen(function*() {
      const paused = yield* Agent.stream({ model, toolkit, messages: ask }).pipe(Agent.runForEach(() => Effect.void))
      const error = yield* Effect.flip(
        Agent.resumeStream({
          model,
          toolkit,
          transcript: paused.transcript,
          usage: paused.usage,
          budget: { totalTokens: paused.usage.total_tokens },
          decisions: { [paused.pending[0]!.approvalId]: "approve" }
        }).pipe(Stream.runDrain)
      )
      expect(error).toMatchObject({ _tag: "BudgetExceeded", limit: "totalTokens" })
    }).pipe(setup()))

  it.effect("runForEach gives the run's error as the stream fails with it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Agent.stream({ model, toolkit, maxSteps: 1, messages: [user("Use get_time then get_weather")] }).pipe(
          Agent.runForEach(() => Effect.void)
        )
      )
      expect(error._tag).toBe("MaxStepsExceeded")
    }).pipe(setup()))
})
