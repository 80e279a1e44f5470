import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Emulator from "../src/Emulator.js"
import { call, chat, completion, errorOf, message } from "./utils.js"

const run = Effect.provide(Emulator.layer())

// 1x1 transparent PNG, 68 bytes
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII="

describe("chat", () => {
  it.effect("answers deterministically in the chat.completion format", () =>
    Effect.gen(function*() {
      const body = { messages: [{ role: "user", content: "Hello there" }] }
      const first = yield* chat(body)
      const second = yield* chat(body)
      expect(first.status).toBe(200)
      const body1 = completion(first)
      expect(body1).toMatchObject({
        object: "chat.completion",
        model: "gpt-4o-mini",
        choices: [{ index: 0, message: { role: "assistant" }, finish_reason: "stop" }]
      })
      expect(body1.id).toMatch(/^chatcmpl-/)
      expect(typeof body1.created).toBe("number")
      const content = message(first).content ?? ""
      expect(content.startsWith(`You said: "Hello there".`)).toBe(true)
      expect(message(second).content).toBe(content)
      const { completion_tokens, prompt_tokens, total_tokens } = body1.usage!
      expect(prompt_tokens).toBe(2)
      expect(completion_tokens).toBe(content.split(/\s+/).length)
      expect(total_tokens).toBe(prompt_tokens + completion_tokens)
    }).pipe(run))

  it.effect("truncates to max_tokens words with finish_reason length", () =>
    Effect.gen(function*() {
      const reply = yield* chat({ messages: [{ role: "user", content: "Hello there" }], max_tokens: 3 })
      expect(message(reply).content).toBe(`You said: "Hello`)
      expect(completion(reply).choices[0]!.finish_reason).toBe("length")
      expect(completion(reply).usage!.completion_tokens).toBe(3)
    }).pipe(run))

  it.effect("reports the images it received", () =>
    Effect.gen(function*() {
      const reply = yield* chat({
        model: "gpt-4o",
        messages: [{
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
            { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } }
          ]
        }]
      })
      expect(reply.status).toBe(200)
      expect(message(reply).content).toContain(
        "Received 2 images: image/png 68 bytes (data URI), https://example.com/cat.jpg (URL)."
      )
    }).pipe(run))

  it.effect("rejects a malformed data URI naming the part", () =>
    Effect.gen(function*() {
      for (const url of ["data:image/png;base64,abcde", "data:image/png,abcd", "data:image/png;base64,!!!!"]) {
        const reply = yield* chat({
          messages: [{ role: "user", content: [{ type: "text", text: "x" }, { type: "image_url", image_url: { url } }] }]
        })
        expect(reply.status).toBe(400)
        expect(errorOf(reply).param).toBe("messages[0].content[1].image_url.url")
        expect(errorOf(reply).type).toBe("invalid_request_error")
      }
    }).pipe(run))

  it.effect("names the field of a tool message without tool_call_id", () =>
    Effect.gen(function*() {
      const reply = yield* chat({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] },
          { role: "tool", content: "42" }
        ]
      })
      expect(reply.status).toBe(400)
      expect(errorOf(reply).param).toBe("messages[2].tool_call_id")
    }).pipe(run))

  it.effect("rejects tool messages that do not answer the preceding assistant message", () =>
    Effect.gen(function*() {
      const assistant = (id: string) => ({
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: "f", arguments: "{}" } }]
      })
      const stale = yield* chat({
        messages: [
          { role: "user", content: "hi" },
          assistant("call_a"),
          { role: "tool", tool_call_id: "call_a", content: "1" },
          assistant("call_b"),
          { role: "tool", tool_call_id: "call_a", content: "2" }
        ]
      })
      expect(stale.status).toBe(400)
      expect(errorOf(stale).param).toBe("messages[4].tool_call_id")
      const unanswered = yield* chat({ messages: [{ role: "user", content: "hi" }, assistant("call_a"), { role: "user", content: "?" }] })
      expect(unanswered.status).toBe(400)
      expect(errorOf(unanswered).param).toBe("messages[1].tool_calls[0]")
    }).pipe(run))

  it.effect("404s an unknown model and 400s a model of the wrong kind", () =>
    Effect.gen(function*() {
      const unknown = yield* chat({ model: "gpt-99", messages: [{ role: "user", content: "hi" }] })
      expect(unknown.status).toBe(404)
      expect(errorOf(unknown)).toMatchObject({ code: "model_not_found", param: "model" })
      const wrong = yield* chat({ model: "text-embedding-3-small", messages: [{ role: "user", content: "hi" }] })
      expect(wrong.status).toBe(400)
      expect(errorOf(wrong).param).toBe("model")
      const embedWithChat = yield* call("/v1/embeddings", { body: { model: "gpt-4o", input: "hi" } })
      expect(embedWithChat.status).toBe(400)
      expect(errorOf(embedWithChat).param).toBe("model")
    }).pipe(run))

  it.effect("names missing and invalid fields", () =>
    Effect.gen(function*() {
      const missing = yield* call("/v1/chat/completions", { body: { messages: [{ role: "user", content: "hi" }] } })
      expect(errorOf(missing).param).toBe("model")
      const empty = yield* chat({ messages: [] })
      expect(errorOf(empty).param).toBe("messages")
      const tokens = yield* chat({ messages: [{ role: "user", content: "hi" }], max_tokens: 0 })
      expect(errorOf(tokens).param).toBe("max_tokens")
    }).pipe(run))
})
