/**
 * The emulator's wire faults (`docs/emulator.md`, Fault injection) as the SDK
 * meets them: what each one becomes, and whether it is retried (decision 6).
 * Retry waits are zero (`retryBaseDelay: 0`), so only the timeout cases move
 * the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, Models, type Protocol, Videos } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { emulated } from "./fixtures.js"

const model = "gpt-4o-mini"
const hello = { model, messages: [{ role: "user", content: "Hello there" }] } satisfies Protocol.ChatRequest
const instant = { retryBaseDelay: 0 } as const

const faulted = (script: ReadonlyArray<Emulator.Fault>, paths?: ReadonlyArray<string>) =>
  Effect.flatMap(Emulator.Emulator, (emulator) => emulator.setFaults({ script, ...(paths ? { paths } : {}) }))

const faultsSeen = Effect.map(
  Effect.flatMap(Emulator.Emulator, (emulator) => emulator.requests),
  (requests) => requests.map((request) => request.fault?._tag ?? "none")
)

/** The raw wire, without the SDK: what a plain `fetch` sees. */
const rawChat = (body: unknown) =>
  Effect.flatMap(Emulator.Emulator, (emulator) =>
    Effect.promise(async () => {
      const response = await fetch(`${emulator.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json", connection: "close" },
        body: JSON.stringify(body)
      })
      const text = await response.text().then((text) => ({ text }), (error: unknown) => ({ error: String(error) }))
      return { status: response.status, length: response.headers.get("content-length"), requestId: response.headers.get("x-request-id"), ...text }
    }))

describe("ResetAfterHeaders: the headers arrive, then the connection drops", () => {
  it.effect("on the wire: a 200 with its headers, then a body that fails", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "ResetAfterHeaders" }])
      const reply = yield* rawChat(hello)
      expect(reply.status).toBe(200)
      expect(reply.requestId).toBe("req_000001")
      expect(Number(reply.length)).toBeGreaterThan(0)
      expect(reply).toHaveProperty("error")
    }).pipe(Effect.provide(emulated())))

  it.effect("a JSON call gets a TransportError (sent) and is retried", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "ResetAfterHeaders" }, { _tag: "ResetAfterHeaders" }])
      const completion = yield* Chat.create(hello)
      expect(completion.choices[0]?.message.content).toContain("Hello there")
      expect(yield* faultsSeen).toEqual(["ResetAfterHeaders", "ResetAfterHeaders", "none"])
    }).pipe(Effect.provide(emulated(instant))))

  it.effect("retries exhausted: the TransportError says the request was sent", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "ResetAfterHeaders" }, { _tag: "ResetAfterHeaders" }])
      const error = yield* Effect.flip(Models.list)
      expect(error).toMatchObject({ _tag: "TransportError", sent: true, message: expect.stringContaining("while reading") })
      expect(yield* faultsSeen).toEqual(["ResetAfterHeaders", "ResetAfterHeaders"])
    }).pipe(Effect.provide(emulated({ ...instant, maxRetries: 1 }))))

  it.effect("a stream that drops before its first byte is retried", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "ResetAfterHeaders" }])
      const text = yield* Stream.runCollect(Chat.streamText(hello))
      expect(text.join("")).toContain("Hello there")
      expect(yield* faultsSeen).toEqual(["ResetAfterHeaders", "none"])
    }).pipe(Effect.provide(emulated(instant))))

  it.effect("a video submission is not retried: the task may exist", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "ResetAfterHeaders" }])
      const error = yield* Effect.flip(Videos.submit({ model: Emulator.videoModel, prompt: "A lighthouse" }))
      expect(error).toMatchObject({ _tag: "TransportError", sent: true })
      expect(yield* faultsSeen).toEqual(["ResetAfterHeaders"])
    }).pipe(Effect.provide(emulated(instant))))
})

describe("TruncateBody: a body cut short", () => {
  it.effect("on the wire: a Content-Length that matches the truncated JSON", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "TruncateBody", keep: 0.5 }])
      const reply = yield* rawChat(hello)
      expect(reply.status).toBe(200)
      expect("text" in reply && reply.text.length).toBe(Number(reply.length))
      expect(() => JSON.parse("text" in reply ? reply.text : "")).toThrow()
    }).pipe(Effect.provide(emulated())))

  it.effect("a complete-looking but cut JSON body is a ResponseDecodeError, not retried", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "TruncateBody" }])
      const error = yield* Effect.flip(Chat.create(hello))
      expect(error).toMatchObject({ _tag: "ResponseDecodeError", status: 200, message: expect.stringContaining("not JSON") })
      expect(yield* faultsSeen).toEqual(["TruncateBody"])
      // The connection was left usable.
      expect((yield* Chat.create(hello)).choices).toHaveLength(1)
    }).pipe(Effect.provide(emulated(instant))))

  it.effect("on the wire, closeConnection: the whole Content-Length is announced, then the socket closes", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "TruncateBody", closeConnection: true }])
      const reply = yield* rawChat(hello)
      expect(reply.status).toBe(200)
      expect(reply).toHaveProperty("error")
    }).pipe(Effect.provide(emulated())))

  it.effect("a JSON body cut by the connection is a TransportError, retried", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "TruncateBody", keep: 0.3, closeConnection: true }])
      const completion = yield* Chat.create(hello)
      expect(completion.choices[0]?.message.content).toContain("Hello there")
      expect(yield* faultsSeen).toEqual(["TruncateBody", "none"])
    }).pipe(Effect.provide(emulated(instant))))

  it.effect("a stream cut mid-event is a StreamError, never a short success, and is not retried", () =>
    Effect.gen(function*() {
      yield* faulted([{ _tag: "TruncateBody", keep: 0.5 }, { _tag: "TruncateBody", keep: 0.5, closeConnection: true }])
      const clean = yield* Effect.flip(Chat.accumulate(Chat.stream(hello)))
      // The body ends inside an event's line: a cut, not a broken chunk.
      expect(clean).toMatchObject({ _tag: "StreamError", reason: "cut", message: expect.stringMatching(/cut inside an event|ended before the completion did/) })
      const dropped = yield* Effect.flip(Chat.accumulate(Chat.stream(hello)))
      expect(dropped).toMatchObject({ _tag: "StreamError", reason: "cut", message: expect.stringContaining("connection was lost mid-stream") })
      expect(yield* faultsSeen).toEqual(["TruncateBody", "TruncateBody"])
    }).pipe(Effect.provide(emulated(instant))))
})

describe("a slow first byte", () => {
  it.effect("Delay holds back everything: a stream fails its first-byte timeout, and is retried", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* faulted([{ _tag: "Delay", delay: "1 hour" }])
      // The Node wire keeps the first-byte limit with a real timer: a short one.
      const fiber = yield* Effect.forkChild(Stream.runCollect(Chat.streamText(hello)))
      yield* emulator.awaitRequests(1)
      expect((yield* Fiber.join(fiber)).join("")).toContain("Hello there")
      expect(yield* faultsSeen).toEqual(["Delay", "none"])
    }).pipe(Effect.provide(emulated({ ...instant, streamFirstByteTimeout: "1 second" }))))

  it.effect("Delay afterHeaders: a 200 at once, the body an hour later → first-byte TimeoutError", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* faulted([{ _tag: "Delay", delay: "1 hour", afterHeaders: true }])
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runDrain(Chat.stream(hello))))
      yield* emulator.awaitRequests(1)
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "TimeoutError", phase: "first-byte" })
      expect(yield* emulator.requestCount).toBe(1)
      yield* emulator.awaitOpenConnections(0)
    }).pipe(Effect.provide(emulated({ ...instant, maxRetries: 0, streamFirstByteTimeout: "300 millis" }))))

  it.effect("Delay afterHeaders shorter than the timeout: the whole stream arrives", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* faulted([{ _tag: "Delay", delay: "2 seconds", afterHeaders: true }])
      const fiber = yield* Effect.forkChild(Chat.accumulate(Chat.stream(hello)))
      yield* emulator.awaitRequests(1)
      yield* TestClock.adjust("2 seconds")
      const completion = yield* Fiber.join(fiber)
      expect(completion.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: expect.stringContaining("Hello there") } })
    }).pipe(Effect.provide(emulated({ ...instant, streamFirstByteTimeout: "5 seconds" }))))

  it.effect("Delay afterHeaders on a JSON call: the request timeout covers reading the body", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* faulted([{ _tag: "Delay", delay: "1 hour", afterHeaders: true }])
      // A real timer in the Node wire, hence a short limit.
      const fiber = yield* Effect.forkChild(Effect.flip(Chat.create(hello)))
      yield* emulator.awaitRequests(1)
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "TimeoutError", phase: "request" })
      yield* emulator.awaitOpenConnections(0)
    }).pipe(Effect.provide(emulated({ ...instant, maxRetries: 0, timeout: "300 millis" }))))
})

describe("faults on task status calls only (paths)", () => {
  it.effect("status failures are retried; the submission is untouched", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const statusOnly = ["/v1/chat/task/status"]
      yield* faulted([{ _tag: "Status", status: 503 }, { _tag: "Reset" }], statusOnly)
      const taskId = yield* Videos.submit({ model: Emulator.videoModel, prompt: "Waves" })
      expect(yield* Videos.status(taskId)).toMatchObject({ _tag: "InProgress", status: "queued" })
      yield* faulted([{ _tag: "ResetAfterHeaders" }, { _tag: "TruncateBody", closeConnection: true }], statusOnly)
      // Both faulted attempts reached the task: the emulator moves it one step per status call it answers.
      expect(yield* Videos.status(taskId)).toMatchObject({ _tag: "Succeeded", taskId })
      const requests = yield* emulator.requests
      expect(requests.map((r) => [r.path, r.fault?._tag ?? "none"])).toEqual([
        ["/v1/chat/completions", "none"],
        ["/v1/chat/task/status", "Status"],
        ["/v1/chat/task/status", "Reset"],
        ["/v1/chat/task/status", "none"],
        ["/v1/chat/task/status", "ResetAfterHeaders"],
        ["/v1/chat/task/status", "TruncateBody"],
        ["/v1/chat/task/status", "none"]
      ])
    }).pipe(Effect.provide(emulated(instant))))
})
