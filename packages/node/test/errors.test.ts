import { describe, expect, it } from "@effect/vitest"
import { Chat, Embeddings, Models, Moderations, type Protocol } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Formatter from "effect/Formatter"
import * as TestClock from "effect/testing/TestClock"
import { emulated, passBackoff, recordingSpans, waitUntil } from "./fixtures.js"

const model = "gpt-4o-mini"
const hello = { model, messages: [{ role: "user", content: "Hello" }] } satisfies Protocol.ChatRequest

describe("bad input is rejected before anything is sent", () => {
  const cases: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown, Chat.Chat | Embeddings.Embeddings | Moderations.Moderations>, string]> = [
    ["empty messages", Chat.create({ model, messages: [] }), "messages must not be empty"],
    [
      "tool message without tool_call_id",
      Chat.create({
        model,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
          { role: "tool", content: "done" } as unknown as Protocol.Message
        ]
      }),
      `messages[2].tool_call_id is required when role is "tool"`
    ],
    [
      "image size",
      Chat.create({ ...hello, model: "image2", size: "800x600" as Protocol.ImageSize }),
      "size must be one of 1024x1024, 1024x1792, 1792x1024"
    ],
    ["n of zero", Chat.create({ ...hello, model: "image2", n: 0 }), "n must be a positive integer"],
    ["n not an integer", Chat.create({ ...hello, model: "image2", n: 1.5 }), "n must be a positive integer"],
    ["empty model", Chat.create({ ...hello, model: "" }), "model must not be empty"],
    [
      "bad image address",
      Chat.create({ model, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://x/y.png" } }] }] }),
      "messages[0].content[0].image_url.url must be an http(s) URL or a data URI"
    ],
    [
      "tool_choice naming no tool",
      Chat.create({ ...hello, tool_choice: { type: "function", function: { name: "missing" } } }),
      "tool_choice requires tools to be given"
    ],
    ["empty embedding input", Embeddings.create({ model: "text-embedding-3-small", input: [] }), "input must not be empty"],
    ["empty embedding text", Embeddings.create({ model: "text-embedding-3-small", input: "" }), "input must not be empty"],
    [
      "an empty text among many",
      Embeddings.embedMany(["a", "b", ""], { model: "text-embedding-3-small" }),
      "input[2] must not be empty"
    ],
    // batchSize is an option, not a field of the request: a ConfigurationError (options.test.ts).
    ["empty moderation input", Moderations.create({ input: "" }), "input must not be empty"]
  ]

  for (const [name, call, message] of cases) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const emulator = yield* Emulator.Emulator
        const error = yield* Effect.flip(call)
        expect(error).toMatchObject({ _tag: "InvalidRequestError" })
        expect((error as Error).message).toContain(message)
        expect(yield* emulator.requestCount).toBe(0)
      }).pipe(Effect.provide(emulated())))
  }
})

describe("service failures are typed", () => {
  it.effect("a wrong key → AuthenticationError with the service's message", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Models.list)
      expect(error._tag).toBe("AuthenticationError")
      expect(error).toMatchObject({ status: 401, message: "Invalid or missing API key" })
      expect((error as { requestId?: string }).requestId).toBeTruthy()
    }).pipe(Effect.provide(emulated({ apiKey: "sk-wrong" }))))

  it.effect("an unknown model → NotFoundError naming the model", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Chat.create({ ...hello, model: "no-such-model" }))
      expect(error).toMatchObject({ _tag: "NotFoundError", status: 404, param: "model" })
      expect(error.message).toContain("no-such-model")
    }).pipe(Effect.provide(emulated())))

  it.effect("429 then success waits exactly what Retry-After asks", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 429, retryAfter: 3 }] })
      const fiber = yield* Effect.forkChild(Models.list)
      // The backoff is a sleep due exactly 3 s from now: nothing is sent before.
      yield* waitUntil(RecordingClock.sleeps, (s) => s.some((t) => t === 3000))
      yield* TestClock.adjust("2999 millis")
      expect(yield* emulator.requestCount).toBe(1)
      yield* TestClock.adjust("1 millis")
      const models = yield* Fiber.join(fiber)
      expect(models.length).toBeGreaterThan(0)
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(Effect.provide(emulated())))

  it.effect("retry-after-ms is honoured too", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 503, retryAfterMs: 1500 }] })
      const fiber = yield* Effect.forkChild(Chat.create(hello))
      yield* waitUntil(RecordingClock.sleeps, (s) => s.some((t) => t === 1500))
      yield* TestClock.adjust("1499 millis")
      expect(yield* emulator.requestCount).toBe(1)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(Effect.provide(emulated())))

  it.effect("500 twice then success", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 500 }, { _tag: "Status", status: 500 }] })
      const fiber = yield* Effect.forkChild(Chat.create(hello))
      for (let i = 0; i < 2; i++) yield* passBackoff()
      const completion = yield* Fiber.join(fiber)
      expect(completion.choices[0]?.message.content).toBeTruthy()
      expect(yield* emulator.requestCount).toBe(3)
    }).pipe(Effect.provide(emulated())))

  it.effect("retries exhausted → the last typed error", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({
        script: [{ _tag: "Status", status: 500 }, { _tag: "Status", status: 502 }, { _tag: "Status", status: 503 }]
      })
      const fiber = yield* Effect.forkChild(Effect.flip(Chat.create(hello)))
      for (let i = 0; i < 2; i++) yield* passBackoff()
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "ServerError", status: 503 })
      expect(yield* emulator.requestCount).toBe(3)
    }).pipe(Effect.provide(emulated())))

  it.effect("a 400 is not retried", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 400 }] })
      const error = yield* Effect.flip(Chat.create(hello))
      expect(error).toMatchObject({ _tag: "BadRequestError", status: 400 })
      expect(yield* emulator.requestCount).toBe(1)
    }).pipe(Effect.provide(emulated())))

  it.effect("a connection reset is a TransportError, retried", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Reset" }, { _tag: "Reset" }, { _tag: "Reset" }] })
      const fiber = yield* Effect.forkChild(Effect.flip(Models.list))
      for (let i = 0; i < 2; i++) yield* passBackoff()
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "TransportError", sent: true })
      expect(yield* emulator.requestCount).toBe(3)
    }).pipe(Effect.provide(emulated())))

  it.effect("a slow response → TimeoutError after the configured timeout", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Delay", delay: "10 minutes" }] })
      // A real timer in the Node wire, hence a short limit.
      const fiber = yield* Effect.forkChild(Effect.flip(Models.list))
      yield* emulator.awaitRequests(1)
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "request" })
    }).pipe(Effect.provide(emulated({ timeout: "300 millis", maxRetries: 0 }))))
})

describe("the API key never leaks", () => {
  const secret = "sk-very-secret-key-0123456789"

  it.effect("not in a failed call's error message, toString, JSON or span attributes", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 400 }] })
      const failures = [
        yield* recordingSpans(Chat.create(hello)),
        yield* recordingSpans(Chat.create({ ...hello, model: "unknown-model" }))
      ]
      for (const { result, spans } of failures) {
        expect(result._tag).toBe("Failure")
        const error = result._tag === "Failure" ? result.failure : undefined
        const seen = [
          String(error),
          (error as Error).message,
          JSON.stringify(error),
          Formatter.format(error),
          ...spans.flatMap((span) => [span.name, JSON.stringify([...span.attributes])])
        ]
        expect(spans.length).toBeGreaterThan(0)
        expect(error).toHaveProperty("status")
        for (const text of seen) expect(text).not.toContain(secret)
      }
    }).pipe(Effect.provide(emulated({}, { apiKey: secret }))))

  it.effect("the span of a failed call records method, path, model, status and error.type", () =>
    Effect.gen(function*() {
      const { spans } = yield* recordingSpans(Chat.create({ ...hello, model: "unknown-model" }))
      const span = spans.find((s) => s.name === "chat unknown-model")
      expect(span).toBeDefined()
      expect(Object.fromEntries(span!.attributes)).toMatchObject({
        "http.request.method": "POST",
        "url.path": "/v1/chat/completions",
        "gen_ai.request.model": "unknown-model",
        "http.response.status_code": 404,
        "error.type": "NotFoundError"
      })
    }).pipe(Effect.provide(emulated({}, { apiKey: secret }))))
})
