import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Emulator from "../src/Emulator.js"
import { call, chat, rawChunks } from "./utils.js"

const run = Effect.provide(Emulator.layer({ minimal: true }))

const weather = {
  type: "function",
  function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string", description: "City" } }, required: ["city"] } }
}

describe("minimal replies: the contract's fields and nothing more", () => {
  it.effect("a completion is {id, choices: [{message: {content}}]}", () =>
    Effect.gen(function*() {
      const reply = yield* chat({ messages: [{ role: "user", content: "Hello" }] })
      expect(reply.json).toEqual({ id: expect.any(String), choices: [{ message: { content: expect.stringContaining("Hello") } }] })
    }).pipe(run))

  it.effect("tool calls carry id and function only", () =>
    Effect.gen(function*() {
      const reply = yield* chat({ messages: [{ role: "user", content: "Use get_weather for Paris" }], tools: [weather] })
      expect(reply.json).toEqual({
        id: expect.any(String),
        choices: [{ message: { content: null, tool_calls: [{ id: expect.any(String), function: { name: "get_weather", arguments: expect.any(String) } }] } }]
      })
    }).pipe(run))

  it.effect("stream chunks have no index, object, created, model, role or usage", () =>
    Effect.gen(function*() {
      const reply = yield* chat({ messages: [{ role: "user", content: "Hello" }], stream: true, stream_options: { include_usage: true } })
      for (const chunk of rawChunks(reply.text) as ReadonlyArray<Record<string, unknown>>) {
        expect(Object.keys(chunk).sort()).toEqual(["choices", "id"])
        for (const choice of chunk["choices"] as ReadonlyArray<Record<string, unknown>>) {
          expect(Object.keys(choice).filter((k) => k !== "delta" && k !== "finish_reason")).toEqual([])
          expect(choice["delta"]).not.toHaveProperty("role")
        }
      }
    }).pipe(run))

  it.effect("embeddings, moderation, models and task status", () =>
    Effect.gen(function*() {
      const embeddings = yield* call("/v1/embeddings", { body: { model: "text-embedding-3-small", input: ["a", "b"] } })
      expect(Object.keys(embeddings.json as object)).toEqual(["data"])
      expect((embeddings.json as { data: Array<object> }).data.map(Object.keys)).toEqual([["embedding"], ["embedding"]])
      const moderation = yield* call("/v1/moderations", { body: { input: "hello" } })
      expect(moderation.json).toEqual({ results: [{ flagged: false, category_scores: expect.any(Object) }] })
      const models = yield* call("/v1/models")
      expect((models.json as { data: Array<object> }).data.every((m) => Object.keys(m).join() === "id")).toBe(true)
      const submitted = yield* chat({ model: Emulator.videoModel, messages: [{ role: "user", content: "a fox" }] })
      const taskId = (submitted.json as { id: string }).id
      const statuses = []
      for (let i = 0; i < 3; i++) statuses.push((yield* call("/v1/chat/task/status", { body: { task_id: taskId } })).json)
      expect(statuses).toEqual([{ status: "queued" }, { status: "processing" }, { status: "succeed", video_url: expect.any(String) }])
    }).pipe(run))
})
