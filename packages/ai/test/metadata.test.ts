import { describe, expect, it } from "@effect/vitest"
import { Telemetry } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as LanguageModel from "effect/ai/LanguageModel"
import type * as Response from "effect/ai/Response"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { SwitchboardLanguageModel } from "../src/index.js"
import { emulated, HandlersLive, recordingSpans, toolkit } from "./fixtures.js"

const Gpt = SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" })
const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(Layer.mergeAll(Gpt, HandlersLive).pipe(Layer.provideMerge(emulated()))))

const recordedIds = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) => requests.map((r) => r.requestId))

const finishOf = (parts: ReadonlyArray<Response.AnyPart>) => {
  const finish = parts.find((part) => part.type === "finish")
  if (finish?.type !== "finish") throw new Error("no finish part")
  return finish
}

describe("effect/ai's response metadata", () => {
  it.effect("generateText: the finish part has the HTTP status, headers and the recorded request id", () =>
    Effect.gen(function*() {
      const response = yield* LanguageModel.generateText({ prompt: "Hello there" })
      const finish = finishOf(response.content)
      const [id] = yield* recordedIds
      expect(finish.response?.status).toBe(200)
      expect(finish.response?.headers["x-request-id"]).toBe(id)
      expect(finish.metadata["switchboard"]).toMatchObject({ requestId: id, attempts: 1, remainingRequests: 9_999 })
      const meta = response.content.find((part) => part.type === "response-metadata")
      expect(meta?.type === "response-metadata" && meta.modelId).toBe("gpt-4o-mini")
    }).pipe(provide))

  it.effect("streamText: the finish part has the status and the recorded request id", () =>
    Effect.gen(function*() {
      const parts = yield* Stream.runCollect(LanguageModel.streamText({ prompt: "Hello there" }))
      const finish = finishOf(parts)
      const [id] = yield* recordedIds
      expect(finish.response?.status).toBe(200)
      expect(finish.metadata["switchboard"]).toMatchObject({ requestId: id })
    }).pipe(provide))
})

describe("what effect/ai's span records of tools", () => {
  const withTools = LanguageModel.generateText({ prompt: "Use get_weather please", toolkit, toolChoice: { tool: "get_weather" } })

  it.effect("without the content opt-in: no tool arguments (effect/ai's `parameters`) nor `tool`", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* recordingSpans(withTools)
      expect(result._tag).toBe("Success")
      const outer = spans.find((s) => s.name === "LanguageModel.generateText")!
      expect(outer.attributes.has("parameters")).toBe(false)
      expect(outer.attributes.has("tool")).toBe(false)
      expect(JSON.stringify(Object.fromEntries(outer.attributes))).not.toContain("sample city")
    }).pipe(provide))

  it.effect("with the opt-in: effect/ai's own `tool` and `parameters` stay", () =>
    Effect.gen(function*() {
      const { spans } = yield* recordingSpans(Telemetry.withContentCapture(withTools))
      const outer = spans.find((s) => s.name === "LanguageModel.generateText")!
      expect(outer.attributes.get("tool")).toBe("get_weather")
      expect(outer.attributes.get("parameters")).toEqual({ city: "sample city" })
    }).pipe(provide))
})
