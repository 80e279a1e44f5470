import { describe, expect, it } from "@effect/vitest"
import { Chat, Embeddings, Pacing, type Protocol, ResponseMetadata, Switchboard, SwitchboardConfig, TaskJournal } from "@switchboard/core"
import * as HttpClientWire from "@switchboard/core/HttpClientWire"
import * as HttpWire from "@switchboard/core/HttpWire"
import { Emulator } from "@switchboard/emulator"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { NodeHttpWire, NodeSwitchboard } from "../src/index.js"
import { emulated, eventually, passBackoff, recordingSpans, waitUntil } from "./fixtures.js"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"

const model = "gpt-4o-mini"
const hello = { model, messages: [{ role: "user", content: "Hello" }] } satisfies Protocol.ChatRequest
const instant = { retryBaseDelay: "1 millis", maxRetryDelay: "1 millis" } as const

/** The request id the emulator recorded for its latest request. */
const lastRecordedId = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) => requests.at(-1)?.requestId)

/**
 * The SDK over `wire` (the real one, over real HTTP to the emulator), each
 * head the wire reports counted in `heads`: how a test knows the client has
 * the headers while the body is still held back.
 */
const watched = (wire: Layer.Layer<HttpWire.HttpWire, unknown>, heads: { count: number }) =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) =>
      Switchboard.layer.pipe(
        Layer.provide(SwitchboardConfig.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, timeout: "2 hours" })),
        Layer.provide(TaskJournal.layerMemory),
        Layer.provide(Layer.effect(
          HttpWire.HttpWire,
          Effect.map(Effect.service(HttpWire.HttpWire), (inner): HttpWire.Service => ({
            ...inner,
            text: (request, limits, onHead) =>
              inner.text(request, limits, () => {
                onHead?.()
                heads.count += 1
              })
          }))
        ).pipe(Layer.provide(wire)))
      ))
  ).pipe(Layer.provideMerge(Emulator.layer()), Layer.provideMerge(RecordingClock.layer))

const wires = [
  ["NodeHttpWire", NodeHttpWire.layer],
  ["HttpClientWire over fetch", HttpClientWire.layer.pipe(Layer.provide(FetchHttpClient.layer))]
] as const

describe("time to first byte of a JSON call", () => {
  for (const [name, wire] of wires) {
    const heads = { count: 0 }
    it.effect(`${name}: timed at the headers, before the body (held back an hour on the test clock)`, () =>
      Effect.gen(function*() {
        const emulator = yield* Emulator.Emulator
        yield* emulator.setFaults({ script: [{ _tag: "Delay", delay: "1 hour", afterHeaders: true }] })
        heads.count = 0
        const start = yield* Clock.currentTimeMillis
        const fiber = yield* Effect.forkChild(Switchboard.withResponse(Chat.create(hello)))
        // The client has the headers and the emulator holds the body: only then does time pass.
        yield* eventually(Effect.sync(() => heads.count), (n) => n === 1)
        yield* waitUntil(RecordingClock.sleeps, (s) => s.includes(start + 3_600_000))
        yield* TestClock.adjust("1 hour")
        const [completion, response] = yield* Fiber.join(fiber)
        expect(completion.choices[0]?.message.content).toContain("Hello")
        const { firstByte, total } = response.timings
        expect(firstByte).toBeDefined()
        expect(Duration.isLessThan(firstByte!, total)).toBe(true)
      }).pipe(Effect.provide(watched(wire, heads))))

    it.effect(`${name}: every reply has it, at most the total: a chat, embeddings, a refused attempt`, () =>
      Effect.gen(function*() {
        const emulator = yield* Emulator.Emulator
        const [, chat] = yield* Switchboard.withResponse(Chat.create(hello))
        const [, embeddings] = yield* Switchboard.withResponse(Embeddings.create({ model: "text-embedding-3-small", input: "a" }))
        yield* emulator.setFaults({ script: [{ _tag: "Status", status: 500 }] })
        const error = yield* Effect.flip(Chat.create(hello).pipe(Switchboard.withRequestOptions({ maxRetries: 0 })))
        for (const response of [chat, embeddings, ResponseMetadata.ofError(error)!]) {
          expect(response.timings.firstByte).toBeDefined()
          expect(Duration.isLessThanOrEqualTo(response.timings.firstByte!, response.timings.total)).toBe(true)
        }
      }).pipe(Effect.provide(watched(wire, heads))))
  }
})

describe("response metadata", () => {
  it.effect("a chat call: the recorded request id, parsed limits, processing time, redacted headers", () =>
    Effect.gen(function*() {
      const [completion, response] = yield* Switchboard.withResponse(Chat.create(hello))
      expect(completion.choices[0]?.message.content).toContain("Hello")
      expect(response.requestId).toBe(yield* lastRecordedId)
      expect(response.status).toBe(200)
      expect(response.attempts).toBe(1)
      expect(response.rateLimits).toMatchObject({ limitRequests: 10_000, remainingRequests: 9_999, limitTokens: 1_000_000 })
      expect(Duration.toMillis(response.rateLimits.resetRequests!)).toBe(6)
      expect(response.processingTime).toBeDefined()
      expect(response.timings.total).toBeDefined()
      for (const name of Object.keys(response.headers)) expect(name).toBe(name.toLowerCase())
      expect(response.headers["x-request-id"]).toBe(response.requestId)
    }).pipe(Effect.provide(emulated())))

  it.effect("a reply's metadata is plain data: a copy, a spread or its JSON has the headers, limits and processing time", () =>
    Effect.gen(function*() {
      const [, response] = yield* Switchboard.withResponse(Chat.create(hello))
      // Made on first read (the headers redacted then): a copy made first must hold them too.
      const copy = { ...response }
      const json = JSON.parse(JSON.stringify(response)) as Record<string, unknown>
      expect(Object.keys(response)).toEqual(expect.arrayContaining(["headers", "rateLimits", "processingTime"]))
      expect(copy.headers["x-request-id"]).toBe(response.requestId)
      expect(copy.rateLimits).toMatchObject({ limitRequests: 10_000, remainingRequests: 9_999 })
      expect(copy.processingTime).toBeDefined()
      expect(json["headers"]).toEqual(response.headers)
      expect(response.headers).toBe(copy.headers)
    }).pipe(Effect.provide(emulated())))

  it.effect("embeddings: the recorded request id", () =>
    Effect.gen(function*() {
      const [, response] = yield* Switchboard.withResponse(Embeddings.create({ model: "text-embedding-3-small", input: "a" }))
      expect(response.requestId).toBe(yield* lastRecordedId)
    }).pipe(Effect.provide(emulated())))

  it.effect("a stream: the metadata arrives with the headers, before the first chunk", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      // The headers at once, the body an hour later on the test clock.
      yield* emulator.setFaults({ script: [{ _tag: "Delay", delay: "1 hour", afterHeaders: true }] })
      const chunks: Array<string> = []
      const got = yield* Deferred.make<ResponseMetadata.ResponseMetadata>()
      const fiber = yield* Effect.forkChild(Effect.scoped(Effect.gen(function*() {
        const [stream, response] = yield* Switchboard.withResponse(Chat.stream(hello))
        yield* Deferred.succeed(got, response)
        yield* Stream.runForEach(stream, (chunk) => Effect.sync(() => chunks.push(chunk.id ?? "")))
      })))
      const response = yield* Deferred.await(got)
      expect(chunks).toEqual([])
      expect(response.requestId).toBe(yield* lastRecordedId)
      expect(response.timings.firstByte).toBeDefined()
      yield* TestClock.adjust("1 hour")
      yield* Fiber.join(fiber)
      expect(chunks.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(emulated({ streamFirstByteTimeout: "2 hours", streamTotalTimeout: "3 hours" }))))

  it.effect("the per-call hook sees every reply, a refused attempt too; the error carries its reply's metadata", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 429, retryAfterMs: 1 }] })
      const seen: Array<ResponseMetadata.ResponseMetadata> = []
      const onResponse = (response: ResponseMetadata.ResponseMetadata) => Effect.sync(() => seen.push(response))
      const fiber = yield* Effect.forkChild(Chat.create(hello).pipe(Switchboard.withRequestOptions({ onResponse })))
      yield* emulator.awaitRequests(1)
      yield* passBackoff()
      yield* Fiber.join(fiber)
      expect(seen.map((r) => [r.status, r.attempts])).toEqual([[429, 1], [200, 2]])
      const ids = (yield* emulator.requests).map((r) => r.requestId)
      expect(seen.map((r) => r.requestId)).toEqual(ids)

      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 500 }] })
      const error = yield* Effect.flip(Chat.create(hello).pipe(Switchboard.withRequestOptions({ maxRetries: 0 })))
      const metadata = ResponseMetadata.ofError(error)
      expect(metadata?.status).toBe(500)
      expect(metadata?.requestId).toBe(yield* lastRecordedId)
    }).pipe(Effect.provide(emulated(instant))))

  it.effect("the span carries the request id and the remaining counts", () =>
    Effect.gen(function*() {
      const { spans } = yield* recordingSpans(Chat.create(hello))
      const span = spans.find((s) => s.name === `chat ${model}`)!
      expect(span.attributes.get("switchboard.request_id")).toBe(yield* lastRecordedId)
      expect(span.attributes.get("switchboard.ratelimit.remaining_requests")).toBe(9_999)
      expect(typeof span.attributes.get("switchboard.ratelimit.remaining_tokens")).toBe("number")
    }).pipe(Effect.provide(emulated())))

  it.effect("a refused connection names the host and port, not the key", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Chat.create(hello))
      expect(error._tag).toBe("TransportError")
      expect(error.message).toContain("127.0.0.1:9")
      expect(error.message).not.toContain("sk-secret")
      // No reply, no metadata: a stream's withResponse fails with the stream's error.
      const streamed = yield* Effect.flip(Effect.scoped(Switchboard.withResponse(Chat.stream(hello))))
      expect(streamed._tag).toBe("TransportError")
      expect(ResponseMetadata.ofError(streamed)).toBeUndefined()
    }).pipe(Effect.provide(NodeSwitchboard.layer({ baseUrl: "http://127.0.0.1:9", apiKey: "sk-secret-key", maxRetries: 0 }))))
})

describe("pacing", () => {
  const limitMode = { rateLimit: { requests: 2, window: "10 seconds" } } as const

  it.effect("holds a call while the budget is spent, until the reset: no 429", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* Chat.create(hello)
      yield* Chat.create(hello)
      const fiber = yield* Effect.forkChild(Switchboard.withResponse(Chat.create(hello)))
      // Held: nothing sent, a wait until the window's end pending.
      yield* waitUntil(RecordingClock.sleeps, (s) => s.includes(10_000))
      expect(yield* emulator.requestCount).toBe(2)
      yield* TestClock.adjust("10 seconds")
      const [, response] = yield* Fiber.join(fiber)
      expect(response.status).toBe(200)
      expect(response.attempts).toBe(1)
      expect(yield* emulator.requestCount).toBe(3)
    }).pipe(Effect.provide(Pacing.layer), Effect.provide(emulated({ ...instant, timeout: "1 minute" }, limitMode))))

  it.effect("without pacing the same calls meet a 429", () =>
    Effect.gen(function*() {
      yield* Chat.create(hello)
      yield* Chat.create(hello)
      const error = yield* Effect.flip(Chat.create(hello))
      expect(error._tag).toBe("RateLimitError")
      expect(ResponseMetadata.ofError(error)?.rateLimits.remainingRequests).toBe(0)
    }).pipe(Effect.provide(emulated({ ...instant, maxRetries: 0 }, limitMode))))

  it.effect("a hold past the call's own timeout fails at once, paced, and is not retried", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* Chat.create(hello)
      yield* Chat.create(hello)
      const error = yield* Effect.flip(Chat.create(hello))
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "paced" })
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(Effect.provide(Pacing.layer), Effect.provide(emulated({ ...instant, timeout: "1 second" }, limitMode))))
})
