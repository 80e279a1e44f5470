import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { emulated, waitUntil } from "./fixtures.js"

const model = "gpt-4o-mini"
const hello = { model, messages: [{ role: "user", content: "Tell me about streams" }] } satisfies Protocol.ChatRequest

const cityTool = (name: string, description: string): Protocol.Tool => ({
  type: "function",
  function: {
    name,
    description,
    parameters: {
      type: "object",
      properties: { city: { type: "string", description: "City name" } },
      required: ["city"],
      additionalProperties: false
    }
  }
})
const tools = [cityTool("get_weather", "Weather for a city"), cityTool("get_time", "Local time in a city")]

/** Waits, without moving the clock, until some fiber sleeps until at most `limit` ms. */
const sleeperBy = (limit: number) => waitUntil(RecordingClock.sleeps, (sleeps) => sleeps.some((t) => t <= limit))

/** `stream` drained in a fiber, counting the chunks that arrived. */
const drainCounting = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.gen(function*() {
    const received = yield* Ref.make(0)
    const fiber = yield* Effect.forkChild(Effect.flip(Stream.runDrain(Stream.tap(stream, () => Ref.update(received, (n) => n + 1)))))
    return { fiber, received }
  })

describe("Chat.stream over HTTP to the emulator", () => {
  it.effect("streamed text equals the non-streamed reply, and accumulates to it", () =>
    Effect.gen(function*() {
      const plain = yield* Chat.create(hello)
      const pieces = yield* Stream.runCollect(Chat.streamText(hello))
      expect(pieces.length).toBeGreaterThan(10)
      expect(pieces.join("")).toBe(plain.choices[0]?.message.content)
      const folded = yield* Chat.accumulate(Chat.stream(hello))
      expect(folded.choices).toEqual(plain.choices)
      expect(folded).toMatchObject({ id: expect.any(String), model: plain.model, created: expect.any(Number) })
    }).pipe(Effect.provide(emulated())))

  it.effect("two parallel streamed tool calls accumulate to the non-streamed calls", () =>
    Effect.gen(function*() {
      const request = { model, tools, messages: [{ role: "user", content: "Use get_weather and get_time for Paris" }] } satisfies Protocol.ChatRequest
      const plain = yield* Chat.create(request)
      const folded = yield* Chat.accumulate(Chat.stream(request))
      expect(plain.choices[0]?.message.tool_calls?.map((call) => call.function.name)).toEqual(["get_weather", "get_time"])
      expect(folded.choices[0]?.message.tool_calls).toEqual(plain.choices[0]?.message.tool_calls)
      expect(folded.choices[0]?.finish_reason).toBe("tool_calls")
    }).pipe(Effect.provide(emulated({}, { stream: { chunkSize: 2 } }))))

  it.effect("include_usage yields the usage of the non-streamed reply", () =>
    Effect.gen(function*() {
      const plain = yield* Chat.create(hello)
      const withUsage = yield* Chat.accumulate(Chat.stream(hello, { includeUsage: true }))
      const without = yield* Chat.accumulate(Chat.stream(hello))
      expect(withUsage.usage).toEqual(plain.usage)
      expect(without.usage).toBeUndefined()
    }).pipe(Effect.provide(emulated())))

  it.effect("streamWithCompletion gives the text as it arrives, then the completion with its usage, from one request", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const plain = yield* Chat.create(hello)
      const before = yield* emulator.requestCount
      const parts = (yield* Stream.runCollect(Chat.streamWithCompletion(hello)))
      expect(yield* emulator.requestCount).toBe(before + 1)
      const last = parts.at(-1)
      const deltas = parts.slice(0, -1)
      expect(deltas.length).toBeGreaterThan(10)
      expect(deltas.every((part) => part._tag === "TextDelta")).toBe(true)
      expect(deltas.map((part) => (part._tag === "TextDelta" ? part.text : "")).join("")).toBe(plain.choices[0]?.message.content)
      expect(last?._tag).toBe("Completion")
      if (last?._tag === "Completion") {
        expect(last.completion.choices).toEqual(plain.choices)
        expect(last.completion.usage).toEqual(plain.usage)
      }
    }).pipe(Effect.provide(emulated())))

  it.effect("taking a few chunks of a long stream closes its connection", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const long = { model, messages: [{ role: "user", content: "word ".repeat(5000) }] } satisfies Protocol.ChatRequest
      const taken = yield* Stream.runCollect(Stream.take(Chat.stream(long), 3))
      expect(taken.length).toBe(3)
      // undici keeps a finished response's connection for reuse: only an
      // aborted request brings the count back to 0.
      expect(yield* waitUntil(emulator.openConnections, (n) => n === 0)).toBe(0)
      expect(yield* emulator.requestCount).toBe(1)
    }).pipe(Effect.provide(emulated({}, { stream: { chunkSize: 1 } }))))

  it.effect("a stalled stream fails with an idle TimeoutError and closes its connection", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "StallStream", afterChunks: 3 }] })
      const { fiber, received } = yield* drainCounting(Chat.stream(hello))
      yield* waitUntil(Ref.get(received), (n) => n === 3)
      // The Node wire keeps the idle limit with a real timer, hence a short one
      // (its boundary under a TestClock: HttpClientWire.test.ts).
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "TimeoutError", phase: "idle" })
      expect(yield* Ref.get(received)).toBe(3)
      expect(yield* waitUntil(emulator.openConnections, (n) => n === 0)).toBe(0)
    }).pipe(Effect.provide(emulated({ streamIdleTimeout: "300 millis", streamFirstByteTimeout: "1 minute" }))))

  it.effect("a reply slower than the first-byte timeout fails with a first-byte TimeoutError", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Delay", delay: "1 hour" }] })
      // A real timer in the Node wire, hence a short limit.
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runDrain(Chat.stream(hello))))
      yield* emulator.awaitRequests(1)
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "TimeoutError", phase: "first-byte" })
      expect(yield* emulator.requestCount).toBe(1)
    }).pipe(Effect.provide(emulated({ streamFirstByteTimeout: "300 millis", maxRetries: 0 }))))

  it.effect("a per-call first-byte timeout wins, and the timed-out attempt is retried", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Delay", delay: "1 hour" }] })
      const fiber = yield* Effect.forkChild(Stream.runCollect(Chat.streamText(hello, { firstByteTimeout: "1 second" })))
      yield* emulator.awaitRequests(1)
      yield* sleeperBy(1_000) // the backoff, at most 600 ms, after the real 1 s limit
      yield* TestClock.adjust("1 second")
      const text = yield* Fiber.join(fiber)
      expect(text.join("")).toContain("Tell me about streams")
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(Effect.provide(emulated({ streamFirstByteTimeout: "1 minute" }))))

  it.effect("a 503 before the stream starts is retried", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 503 }] })
      const fiber = yield* Effect.forkChild(Chat.accumulate(Chat.stream(hello)))
      yield* sleeperBy(1_000)
      yield* TestClock.adjust("1 second")
      const completion = yield* Fiber.join(fiber)
      expect(completion.choices[0]?.message.content).toContain("Tell me about streams")
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(Effect.provide(emulated())))

  it.effect("a connection reset before the stream starts is retried", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Reset" }] })
      const fiber = yield* Effect.forkChild(Stream.runCollect(Chat.streamText(hello)))
      yield* sleeperBy(1_000)
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(fiber)).join("")).toContain("Tell me about streams")
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(Effect.provide(emulated())))

  it.effect("a stream cut mid-way is a StreamError, not a short answer, and is not retried", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "CutStream", afterChunks: 4 }] })
      const error = yield* Effect.flip(Chat.accumulate(Chat.stream(hello)))
      expect(error).toMatchObject({ _tag: "StreamError", message: expect.stringContaining("ended before the completion did") })
      expect((error as { requestId?: string }).requestId).toBeTruthy()
      expect(yield* emulator.requestCount).toBe(1)
    }).pipe(Effect.provide(emulated())))

  it.effect("an error event is a StreamError with the service's message, after the chunks before it", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "ErrorEvent", afterChunks: 3, message: "The model is overloaded" }] })
      const { fiber, received } = yield* drainCounting(Chat.stream(hello))
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "StreamError", message: "The model is overloaded" })
      expect(yield* Ref.get(received)).toBe(3)
      expect(yield* emulator.requestCount).toBe(1)
    }).pipe(Effect.provide(emulated())))

  it.effect("a request the service would reject is not sent", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const error = yield* Effect.flip(Stream.runDrain(Chat.stream({ ...hello, model: "" })))
      expect(error).toMatchObject({ _tag: "InvalidRequestError", field: "model" })
      expect(yield* emulator.requestCount).toBe(0)
    }).pipe(Effect.provide(emulated())))
})
