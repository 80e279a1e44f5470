/**
 * `BrowserHttpWire`, the wire over `fetch`, across real HTTP to the emulator
 * (Node has `fetch`; `browser.test.ts` runs the page in Chromium). Its time
 * limits run on the fiber's clock, so the timing tests move a `TestClock`
 * once the limit's timer is pending, against an emulator that holds its
 * reply back for an hour.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol, type SwitchboardConfig } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Tracer from "effect/Tracer"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { BrowserSwitchboard } from "../src/index.js"

const hello = {
  model: Emulator.chatModel,
  messages: [{ role: "user", content: "Tell me about wires" }]
} satisfies Protocol.ChatRequest

/** The event loop's next turn: the wire's fetch callbacks run (no time is waited). */
const nextTurn = Effect.callback<void>((resume) => void setImmediate(() => resume(Effect.void)))

/** Waits until a sleep of `millis` from now is pending, then lets it pass. */
const passTimer = (millis: number) =>
  Effect.gen(function*() {
    const due = (yield* Clock.currentTimeMillis) + millis
    while (!(yield* RecordingClock.sleeps).includes(due)) yield* nextTurn
    yield* TestClock.adjust(millis)
  })

/** A chat completion as the service sends it. */
const completion = {
  id: "c",
  object: "chat.completion",
  created: 1,
  model: Emulator.chatModel,
  choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }]
}

/** A `node:http` server on 127.0.0.1 for the scope, answering with `handler`: its base URL. */
const serve = (handler: Http.RequestListener) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.callback<Http.Server>((resume) => {
        const server = Http.createServer(handler)
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
    ),
    (server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  )

/** The chat-only browser layer over the emulator, on a recording `TestClock`. */
const emulated = (options: Partial<SwitchboardConfig.Options> = {}) =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) =>
      BrowserSwitchboard.layerChat({ baseUrl: emulator.url, apiKey: emulator.apiKey, allowApiKeyInBrowser: true, ...options }))
  ).pipe(Layer.provideMerge(Emulator.layer()), Layer.provideMerge(RecordingClock.layer))

/** `Chat.stream(hello)` in a fiber, its chunks collected; `twoArrived` waits for the first two. */
const streamInBackground = Effect.gen(function*() {
  const chunks: Array<Protocol.ChatCompletionChunk> = []
  const second = yield* Deferred.make<void>()
  const fiber = yield* Effect.forkChild(Stream.runForEach(Chat.stream(hello), (chunk) =>
    Effect.suspend(() => {
      chunks.push(chunk)
      return chunks.length === 2 ? Deferred.succeed(second, undefined) : Effect.void
    })))
  return { chunks, fiber, twoArrived: Deferred.await(second) }
})

describe("BrowserHttpWire", () => {
  it.effect("layerChat calls and streams; a service error is typed", () =>
    Effect.gen(function*() {
      const completion = yield* Chat.create(hello)
      const deltas = yield* Stream.runCollect(Chat.streamText(hello))
      expect(deltas.join("")).toBe(completion.choices[0]?.message.content)
      const error = yield* Effect.flip(Chat.create({ ...hello, model: "no-such-model" }))
      expect(error._tag).toBe("NotFoundError")
    }).pipe(Effect.provide(emulated())))

  it.effect("layerChat keeps the key guard", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.scoped(Layer.build(BrowserSwitchboard.layerChat({ baseUrl: "/", apiKey: "sk-x" }))))
      expect(error).toMatchObject({ _tag: "ApiKeyInBrowserError", where: "apiKey" })
    }))

  it.effect("a reply slower than the request timeout fails with a request TimeoutError and closes the connection", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Delay", delay: "1 hour" }] })
      const fiber = yield* Effect.forkChild(Effect.flip(Chat.create(hello)))
      yield* emulator.awaitRequests(1)
      yield* passTimer(300)
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "request" })
      expect(error.message).toBe("POST /v1/chat/completions took longer than 300 ms")
      expect(yield* emulator.requestCount).toBe(1)
      yield* emulator.awaitOpenConnections(0)
    }).pipe(Effect.provide(emulated({ timeout: "300 millis", maxRetries: 0 }))))

  it.effect("a stream that stalls mid-way fails with an idle TimeoutError after what arrived", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "StallStream", afterChunks: 2 }] })
      const { chunks, fiber, twoArrived } = yield* streamInBackground
      yield* twoArrived
      yield* passTimer(300)
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "idle" })
      expect(chunks).toHaveLength(2)
      yield* emulator.awaitOpenConnections(0)
    }).pipe(Effect.provide(emulated({ streamIdleTimeout: "300 millis", maxRetries: 0 }))))

  it.effect("interrupting a stream mid-way closes its connection", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "StallStream", afterChunks: 2 }] })
      const { fiber, twoArrived } = yield* streamInBackground
      yield* twoArrived
      expect(yield* emulator.openConnections).toBe(1)
      yield* Fiber.interrupt(fiber)
      yield* emulator.awaitOpenConnections(0)
    }).pipe(Effect.provide(emulated({ maxRetries: 0 }))))

  it.effect("a refused connection is a TransportError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.provide(
          Chat.create(hello),
          BrowserSwitchboard.layerChat({ baseUrl: "http://127.0.0.1:9", maxRetries: 0 })
        )
      )
      expect(error._tag).toBe("TransportError")
    }))

  it.effect("a reply over maxResponseBytes fails with ResponseTooLargeError, not retried", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const error = yield* Effect.flip(Chat.create(hello))
      expect(error).toMatchObject({ _tag: "ResponseTooLargeError", limit: 64 })
      expect(yield* emulator.requestCount).toBe(1)
    }).pipe(Effect.provide(emulated({ maxResponseBytes: 64 }))))

  it.effect("a reply without a length, over maxResponseBytes, fails with ResponseTooLargeError once past the limit", () =>
    Effect.gen(function*() {
      // Chunked, no content-length: the limit is found while reading.
      const baseUrl = yield* serve((_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.write(`{"id":"${"x".repeat(600)}`)
        response.end(`${"y".repeat(600)}"}`)
      })
      const error = yield* Effect.flip(Effect.provide(
        Chat.create(hello),
        BrowserSwitchboard.layerChat({ baseUrl, maxResponseBytes: 1000, maxRetries: 0 })
      ))
      expect(error).toMatchObject({ _tag: "ResponseTooLargeError", limit: 1000 })
    }))

  it.effect("a request carries the W3C traceparent of its call's span, in the caller's trace, unless propagation is off", () =>
    Effect.gen(function*() {
      const seen: Array<string | undefined> = []
      const baseUrl = yield* serve((request, response) => {
        seen.push(request.headers["traceparent"] as string | undefined)
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify(completion))
      })
      const layer = BrowserSwitchboard.layerChat({ baseUrl, maxRetries: 0 })
      const caller = yield* Effect.provide(Effect.andThen(Chat.create(hello), Effect.currentSpan), layer).pipe(
        Effect.withSpan("caller")
      )
      yield* Effect.provide(Chat.create(hello), layer).pipe(
        Effect.withSpan("caller"),
        Effect.provideService(Tracer.DisablePropagation, true)
      )
      expect(seen).toHaveLength(2)
      const [version, traceId, spanId, flags] = seen[0]!.split("-")
      expect({ version, traceId, flags }).toEqual({ version: "00", traceId: caller.traceId, flags: "01" })
      // The call's own span (a child of the caller's) is the parent the service sees.
      expect(spanId).toMatch(/^[0-9a-f]{16}$/)
      expect(spanId).not.toBe(caller.spanId)
      expect(seen[1]).toBeUndefined()
    }))
})
