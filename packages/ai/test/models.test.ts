import { describe, expect, it } from "@effect/vitest"
import { Embeddings } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as ExecutionPlan from "effect/ExecutionPlan"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import { NodeSwitchboard } from "@switchboard/node"
import { SwitchboardEmbeddingModel, SwitchboardLanguageModel } from "../src/index.js"
import { emulated, sentChatBodies, waitUntil } from "./fixtures.js"

describe("EmbeddingModel over the emulator", () => {
  const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(Effect.provide(SwitchboardEmbeddingModel.layer({ model: "text-embedding-3-small" }).pipe(Layer.provideMerge(emulated()))))

  it.effect("embed and embedMany give core's vectors, in input order", () =>
    Effect.gen(function*() {
      const inputs = ["the cat sat", "on the mat", "quantum chromodynamics", "the cat sat"]
      const direct = yield* Embeddings.embedMany(inputs, { model: "text-embedding-3-small" })
      const model = yield* EmbeddingModel.EmbeddingModel
      const many = yield* model.embedMany(inputs)
      expect(many.embeddings.map((e) => e.vector)).toEqual(direct.map((v) => [...v]))
      expect((yield* model.embed("on the mat")).vector).toEqual([...direct[1]!])
    }).pipe(provide))

  it.effect("an unknown model is an InvalidRequestError with the 404, core's NotFoundError as its cause", () =>
    Effect.gen(function*() {
      const model = yield* EmbeddingModel.EmbeddingModel
      const error = yield* Effect.flip(model.embed("x"))
      expect(error.reason).toMatchObject({ _tag: "InvalidRequestError", http: { response: { status: 404 } } })
      expect(error.reason.cause).toMatchObject({ _tag: "NotFoundError" })
      expect(error.method).toBe("embedMany")
    }).pipe(Effect.provide(SwitchboardEmbeddingModel.layer({ model: "no-such-embedder" }).pipe(Layer.provideMerge(emulated())))))

  it.effect("a maxBatchSize that cannot work fails the call naming maxBatchSize, with nothing sent", () =>
    Effect.gen(function*() {
      const model = yield* EmbeddingModel.EmbeddingModel
      const error = yield* Effect.flip(model.embedMany(["a", "b"]))
      expect(error.reason.cause).toMatchObject({ _tag: "ConfigurationError", field: "maxBatchSize" })
      expect(yield* (yield* Emulator.Emulator).requestCount).toBe(0)
    }).pipe(Effect.provide(SwitchboardEmbeddingModel.layer({ model: "text-embedding-3-small", maxBatchSize: NaN }).pipe(Layer.provideMerge(emulated())))))
})

describe("models, plans and retries", () => {
  it.effect("an ExecutionPlan falls back from a model the service fails to one that answers", () =>
    Effect.gen(function*() {
      const plan = ExecutionPlan.make(
        { provide: SwitchboardLanguageModel.model("no-such-model") },
        { provide: SwitchboardLanguageModel.model("gpt-4o-mini") }
      )
      const response = yield* LanguageModel.generateText({ prompt: "Hello" }).pipe(Effect.withExecutionPlan(plan))
      expect(response.text).toContain("You said")
      expect((yield* sentChatBodies).map((b) => b["model"])).toEqual(["no-such-model", "gpt-4o-mini"])
    }).pipe(Effect.provide(emulated())))

  it.effect("a 429 is retried underneath, after its Retry-After: effect/ai sees only the answer", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 429, retryAfter: 2 }] })
      const now = yield* Clock.currentTimeMillis
      const fiber = yield* Effect.forkChild(LanguageModel.generateText({ prompt: "Hello" }))
      yield* waitUntil(RecordingClock.sleeps, (s) => s.includes(now + 2000))
      yield* TestClock.adjust("2 seconds")
      const response = yield* Fiber.join(fiber)
      expect(response.text).toContain("You said")
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(Effect.provide(SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(Layer.provideMerge(emulated())))))
})

describe("one provider layer over two SDK layers", () => {
  // Effect 4 memoizes a layer by reference across nested provides: the same
  // model layer over another SDK layer must use that one's Chat/Embeddings.
  const Gpt = SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" })
  const Small = SwitchboardEmbeddingModel.layer({ model: "text-embedding-3-small" })
  const sdk = (apiKey: (emulator: Emulator.Emulator["Service"]) => string) =>
    Layer.unwrap(Effect.map(Emulator.Emulator, (emulator) =>
      NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: apiKey(emulator), maxRetries: 0 })))
  const wrongKey = () => "sk-another-0123456789abcdef"

  it.live("the inner one sends its own key", () =>
    Effect.gen(function*() {
      const [text, embedding] = yield* Effect.all([
        Effect.flip(LanguageModel.generateText({ prompt: "Hi" })).pipe(Effect.provide(Gpt.pipe(Layer.provide(sdk(wrongKey))))),
        Effect.flip(Effect.flatMap(EmbeddingModel.EmbeddingModel, (model) => model.embed("Hi"))).pipe(Effect.provide(Small.pipe(Layer.provide(sdk(wrongKey)))))
      ]).pipe(
        Effect.provide(Layer.merge(Gpt, Small).pipe(Layer.provide(sdk((emulator) => emulator.apiKey))))
      )
      for (const error of [text, embedding]) {
        expect(error.reason).toMatchObject({ http: { response: { status: 401 } } })
        expect(error.reason.cause).toMatchObject({ _tag: "AuthenticationError" })
      }
    }).pipe(Effect.provide(Emulator.layer())))
})
