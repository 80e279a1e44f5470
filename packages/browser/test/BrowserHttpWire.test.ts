/**
 * `BrowserHttpWire`, the wire over `fetch`, across real HTTP to the emulator
 * (Node has `fetch`; `browser.test.ts` runs the page in Chromium). Its own
 * time limits apply under the default clock, so the timing tests run on the
 * live clock with limits of a few hundred milliseconds against an emulator
 * that holds its reply back for an hour.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol, type SwitchboardConfig } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { BrowserSwitchboard } from "../src/index.js"

const hello = {
  model: Emulator.chatModel,
  messages: [{ role: "user", content: "Tell me about wires" }]
} satisfies Protocol.ChatRequest

/** The chat-only browser layer over the emulator. */
const emulated = (options: Partial<SwitchboardConfig.Options> = {}) =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) =>
      BrowserSwitchboard.layerChat({ baseUrl: emulator.url, apiKey: emulator.apiKey, allowApiKeyInBrowser: true, ...options }))
  ).pipe(Layer.provideMerge(Emulator.layer()))

/** Polls (on the live clock) until `effect` gives a value that passes `done`. */
const eventually = <A, R>(effect: Effect.Effect<A, never, R>, done: (a: A) => boolean): Effect.Effect<A, never, R> =>
  Effect.flatMap(effect, (a) => (done(a) ? Effect.succeed(a) : Effect.andThen(Effect.sleep("10 millis"), eventually(effect, done))))

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

  it.live("a reply slower than the request timeout fails with a request TimeoutError and closes the connection", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Delay", delay: "1 hour" }] })
      const error = yield* Effect.flip(Chat.create(hello))
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "request" })
      expect(error.message).toBe("POST /v1/chat/completions took longer than 300 ms")
      expect(yield* emulator.requestCount).toBe(1)
      expect(yield* eventually(emulator.openConnections, (n) => n === 0)).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(emulated({ timeout: "300 millis", maxRetries: 0 }))))

  it.live("a stream that stalls mid-way fails with an idle TimeoutError after what arrived", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "StallStream", afterChunks: 2 }] })
      const seen: Array<Protocol.ChatCompletionChunk> = []
      const error = yield* Effect.flip(Stream.runForEach(Chat.stream(hello), (chunk) => Effect.sync(() => seen.push(chunk))))
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "idle" })
      expect(seen).toHaveLength(2)
      expect(yield* eventually(emulator.openConnections, (n) => n === 0)).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(emulated({ streamIdleTimeout: "300 millis", maxRetries: 0 }))))

  it.live("interrupting a stream mid-way closes its connection", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "StallStream", afterChunks: 2 }] })
      const seen: Array<Protocol.ChatCompletionChunk> = []
      const fiber = yield* Effect.forkChild(Stream.runForEach(Chat.stream(hello), (chunk) => Effect.sync(() => seen.push(chunk))))
      yield* eventually(Effect.sync(() => seen.length), (n) => n === 2)
      expect(yield* emulator.openConnections).toBe(1)
      yield* Fiber.interrupt(fiber)
      expect(yield* eventually(emulator.openConnections, (n) => n === 0)).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(emulated({ maxRetries: 0 }))))

  it.live("a refused connection is a TransportError", () =>
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

  it.live("a reply without a length, over maxResponseBytes, fails with ResponseTooLargeError once past the limit", () =>
    Effect.gen(function*() {
      // Chunked, no content-length: the limit is found while reading.
      const server = yield* Effect.acquireRelease(
        Effect.callback<Http.Server>((resume) => {
          const server = Http.createServer((_request, response) => {
            response.writeHead(200, { "content-type": "application/json" })
            response.write(`{"id":"${"x".repeat(600)}`)
            response.end(`${"y".repeat(600)}"}`)
          })
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) =>
          Effect.callback<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
      const { port } = server.address() as AddressInfo
      const error = yield* Effect.flip(Effect.provide(
        Chat.create(hello),
        BrowserSwitchboard.layerChat({ baseUrl: `http://127.0.0.1:${port}`, maxResponseBytes: 1000, maxRetries: 0 })
      ))
      expect(error).toMatchObject({ _tag: "ResponseTooLargeError", limit: 1000 })
    }).pipe(Effect.scoped))
})
