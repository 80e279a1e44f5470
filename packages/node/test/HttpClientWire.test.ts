/**
 * Core's `HttpClientWire.layer`: the SDK over an `effect/http`
 * `HttpClient` of the user's choice (here Node's undici client), as
 * docs/getting-started.md shows, across real HTTP to the emulator.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol, Switchboard, SwitchboardConfig, TaskJournal } from "@switchboard/core"
import * as HttpClientWire from "@switchboard/core/HttpClientWire"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { waitUntil } from "./fixtures.js"

const hello = {
  model: Emulator.chatModel,
  messages: [{ role: "user", content: "Tell me about clients" }]
} satisfies Protocol.ChatRequest

const overHttpClient = (options: Partial<SwitchboardConfig.Options> = {}) =>
  Layer.unwrap(
    Effect.map(Effect.service(Emulator.Emulator), (emulator) =>
      Switchboard.layer.pipe(
        Layer.provideMerge(SwitchboardConfig.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, ...options })),
        Layer.provide(TaskJournal.layerMemory),
        Layer.provide(HttpClientWire.layer),
        Layer.provide(NodeHttpClient.layerUndici)
      ))
  ).pipe(Layer.provideMerge(Emulator.layer()))

describe("the SDK over an HttpClient of the user's choice", () => {
  it.effect("chats, whole and streamed", () =>
    Effect.gen(function*() {
      const completion = yield* Chat.create(hello)
      expect(completion.choices[0]?.message.content).toContain("Tell me about clients")
      const streamed = yield* Stream.runCollect(Chat.streamText(hello))
      expect(streamed.join("")).toBe(completion.choices[0]?.message.content)
    }).pipe(Effect.provide(overHttpClient())))

  it.effect("a service error is typed with its status and message", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Chat.create({ ...hello, model: "no-such-model" }))
      expect(error).toMatchObject({ _tag: "NotFoundError", status: 404 })
      expect(error.message).toContain("no-such-model")
    }).pipe(Effect.provide(overHttpClient())))

  it.effect("a stream that stalls fails with an idle TimeoutError (TestClock)", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "StallStream", afterChunks: 2 }] })
      const received = yield* Ref.make(0)
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runForEach(Chat.stream(hello), () => Ref.update(received, (n) => n + 1))))
      yield* waitUntil(Ref.get(received), (n) => n === 2)
      // The idle timer starts with the read that found nothing, just before or
      // after this point: 9,999 ms are too few either way, 10 s more enough.
      yield* TestClock.adjust("9999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "TimeoutError", phase: "idle" })
    }).pipe(Effect.provide(overHttpClient({ streamIdleTimeout: "10 seconds", maxRetries: 0 }))))

  it.effect("a header value the HTTP stack refuses is a ConfigurationError naming it, before anything is sent", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const before = (yield* emulator.requests).length
      const error = yield* Effect.flip(
        Chat.create(hello).pipe(Switchboard.withRequestOptions({ headers: { "x-team": "caf\u00e9 \u2713" } }))
      )
      expect(error).toMatchObject({ _tag: "ConfigurationError", field: "requestOptions.headers.x-team" })
      expect((yield* emulator.requests).length).toBe(before)
    }).pipe(Effect.provide(overHttpClient())))
})
