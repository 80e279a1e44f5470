/**
 * `Chat.stream` over a scripted `HttpClient`: what the emulator cannot stage
 * (a 200 whose body never starts, a connection lost after the first bytes)
 * and what goes on the wire.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Chat from "../src/Chat.js"
import * as HttpClientWire from "../src/HttpClientWire.js"
import type * as Protocol from "../src/Protocol.js"
import * as SwitchboardConfig from "../src/SwitchboardConfig.js"
import * as Transport from "../src/Transport.js"

const utf8 = new TextEncoder()

/** A response body the test writes to by hand. */
const body = () => {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) })
  return {
    stream,
    write: (text: string) => controller.enqueue(utf8.encode(text)),
    close: () => controller.close(),
    fail: (error: Error) => controller.error(error)
  }
}

interface Sent {
  readonly json: Record<string, unknown>
  readonly signal: AbortSignal
}

/** An `HttpClient` answering the n-th request with `respond(n)`, recording what was sent. */
const scripted = (respond: (n: number) => ReadableStream<Uint8Array>) => {
  const sent: Array<Sent> = []
  const client = HttpClient.make((request, _url, signal) =>
    Effect.sync(() => {
      const raw = request.body._tag === "Uint8Array" ? new TextDecoder().decode(request.body.body) : "{}"
      sent.push({ json: JSON.parse(raw), signal })
      return HttpClientResponse.fromWeb(
        request,
        new Response(respond(sent.length), { status: 200, headers: { "content-type": "text/event-stream" } })
      )
    })
  )
  const layer = Chat.layer.pipe(
    Layer.provide(Transport.layer),
    Layer.provide(HttpClientWire.layer),
    Layer.provide(Layer.succeed(HttpClient.HttpClient, client)),
    Layer.provide(SwitchboardConfig.layer({ baseUrl: "http://127.0.0.1:9", streamFirstByteTimeout: "5 seconds" }))
  )
  return { sent, layer }
}

const chunk = (content: string, finish: string | null = null): Protocol.ChatCompletionChunk => ({
  id: "chatcmpl-1",
  choices: [{ index: 0, delta: { content }, finish_reason: finish }]
})
const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`
const complete = () => {
  const b = body()
  b.write(sse(chunk("Hello")) + sse(chunk(" there", "stop")) + "data: [DONE]\n\n")
  b.close()
  return b.stream
}

const request = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } satisfies Protocol.ChatRequest

/** Forks `effect` and lets it start, so that it waits on the clock before a test moves it. */
const started = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.tap(Effect.forkChild(effect), () => Effect.yieldNow)

describe("Chat.stream over a scripted client", () => {
  it.effect("sends stream: true, and include_usage only when asked", () => {
    const { sent, layer } = scripted(complete)
    return Effect.gen(function*() {
      yield* Stream.runDrain(Chat.stream(request))
      yield* Stream.runDrain(Chat.stream(request, { includeUsage: true }))
      yield* Stream.runDrain(Chat.stream({ ...request, stream_options: { include_usage: true } }))
      expect(sent.map((s) => [s.json["stream"], s.json["stream_options"]])).toEqual([
        [true, undefined],
        [true, { include_usage: true }],
        [true, { include_usage: true }]
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("validates the request like create: nothing is sent", () => {
    const { sent, layer } = scripted(complete)
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Stream.runDrain(Chat.stream({ ...request, messages: [] })))
      expect(error).toMatchObject({ _tag: "InvalidRequestError", field: "messages" })
      expect(sent).toHaveLength(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a 200 whose body does not start within the first-byte timeout is retried", () => {
    const stalled = body()
    const { sent, layer } = scripted((n) => (n === 1 ? stalled.stream : complete()))
    return Effect.gen(function*() {
      const fiber = yield* started(Chat.streamText(request).pipe(Stream.runCollect))
      // The TestClock runs what each sleeper it wakes does before the next one.
      yield* TestClock.adjust("5 seconds")
      yield* TestClock.adjust("1 minute")
      const text = yield* Fiber.join(fiber)
      expect(text.join("")).toBe("Hello there")
      expect(sent).toHaveLength(2)
      expect(sent[0]!.signal.aborted).toBe(true)
    }).pipe(Effect.provide(layer))
  })

  it.effect("the first-byte timeout is per attempt and ends as a TimeoutError when retries run out", () => {
    const { sent, layer } = scripted(() => body().stream)
    return Effect.gen(function*() {
      const fiber = yield* started(Effect.flip(Stream.runDrain(Chat.stream(request, { firstByteTimeout: "2 seconds" }))))
      // Attempt, timeout, backoff, attempt, …: the clock runs each sleeper in turn.
      for (let i = 0; i < 10 && fiber.pollUnsafe() === undefined; i++) yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "TimeoutError", phase: "first-byte" })
      expect(sent).toHaveLength(3)
      expect(sent.every((s) => s.signal.aborted)).toBe(true)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a connection lost after the first bytes is a StreamError and is not retried", () => {
    // The connection drops on the read after the first event (a stream
    // errored earlier would discard the queued event).
    const { sent, layer } = scripted(() => {
      let reads = 0
      return new ReadableStream<Uint8Array>({
        pull: (controller) => {
          if (reads++ === 0) controller.enqueue(utf8.encode(sse(chunk("Hel"))))
          else controller.error(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))
        }
      })
    })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Stream.runDrain(Chat.stream(request)))
      expect(error).toMatchObject({ _tag: "StreamError", message: expect.stringContaining("lost mid-stream") })
      expect(sent).toHaveLength(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("taking a few chunks aborts the request", () => {
    const { sent, layer } = scripted(() => {
      const b = body()
      for (let i = 0; i < 10; i++) b.write(sse(chunk(`${i}`)))
      return b.stream
    })
    return Effect.gen(function*() {
      const taken = yield* Stream.runCollect(Stream.take(Chat.streamText(request), 3))
      expect(taken).toEqual(["0", "1", "2"])
      expect(sent[0]!.signal.aborted).toBe(true)
    }).pipe(Effect.provide(layer))
  })
})
