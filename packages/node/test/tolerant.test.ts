/**
 * Tolerant reading (docs/decisions.md): replies need only what the contract
 * shows, and a reply that does not fit says why, path first. Over real HTTP
 * from a server that answers with bare shapes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, Embeddings, Models, Moderations, type Protocol, Videos } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { against, json, sse } from "./hostile.js"

const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } satisfies Protocol.ChatRequest
const replyWith = (body: unknown) => (_: unknown, response: Parameters<typeof json>[0]) => json(response, 200, body)

describe("a reply with only what the contract shows is read", () => {
  it.live("a completion without index, role, finish_reason, object, created or usage", () =>
    against(replyWith({ id: "x", choices: [{ message: { content: "hi" } }, { message: { content: "there" } }] }), () =>
      Effect.gen(function*() {
        const completion = yield* Chat.create(hello)
        expect(completion.choices).toEqual([
          { index: 0, message: { role: "assistant", content: "hi" }, finish_reason: null },
          { index: 1, message: { role: "assistant", content: "there" }, finish_reason: null }
        ])
        expect(completion.usage).toBeUndefined()
      })))

  it.live("tool calls without type; the message goes back as it came", () =>
    against(
      (_request, response, body) =>
        JSON.parse(body).messages.length === 1
          ? json(response, 200, { id: "x", choices: [{ message: { content: null, tool_calls: [{ id: "c1", function: { name: "f", arguments: "{}" } }] } }] })
          : json(response, 200, { id: "y", choices: [{ message: { content: "done" } }] }),
      () =>
        Effect.gen(function*() {
          const first = yield* Chat.create(hello)
          const message = first.choices[0]!.message
          expect(message.tool_calls).toEqual([{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }])
          const second = yield* Chat.create({
            ...hello,
            messages: [...hello.messages, message, { role: "tool", tool_call_id: "c1", content: "ok" }]
          })
          expect(second.choices[0]?.message.content).toBe("done")
        })
    ))

  it.live("usage with counts left out has them as 0", () =>
    against(replyWith({ id: "x", choices: [{ message: { content: "hi" } }], usage: { total_tokens: 7 } }), () =>
      Effect.gen(function*() {
        const completion = yield* Chat.create(hello)
        expect(completion.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 7 })
      })))

  it.live("stream chunks without id, index or delta; accumulate folds them", () =>
    against(
      (_request, response) =>
        sse(
          response,
          [
            { choices: [{ delta: { content: "Hel" } }] },
            { choices: [{ delta: { content: "lo" } }] },
            { choices: [{ finish_reason: "stop" }] }
          ].map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n"
        ),
      () =>
        Effect.gen(function*() {
          const completion = yield* Chat.accumulate(Chat.stream(hello))
          expect(completion.id).toBe("")
          expect(completion.choices).toEqual([{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }])
        })
    ))

  it.live("embeddings without index are in position order", () =>
    against(replyWith({ data: [{ embedding: [1] }, { embedding: [2] }, { embedding: [3] }] }), () =>
      Effect.gen(function*() {
        expect(yield* Embeddings.embedMany(["a", "b", "c"], { model: "e" })).toEqual([[1], [2], [3]])
        const response = yield* Embeddings.create({ model: "e", input: ["a", "b", "c"] })
        expect(response.data.map((d) => d.index)).toEqual([0, 1, 2])
      })))

  it.live("moderation, model list and task status in their bare shapes", () =>
    against(
      (request, response) => {
        if (request.url === "/v1/moderations") return json(response, 200, { results: [{ flagged: true, category_scores: { hate: 0.9 } }] })
        if (request.url === "/v1/models") return json(response, 200, { data: [{ id: "m1" }] })
        return json(response, 200, { status: "succeed", video_url: "https://x/v.mp4" })
      },
      () =>
        Effect.gen(function*() {
          expect(yield* Moderations.check("x")).toEqual({ flagged: true, category_scores: { hate: 0.9 } })
          expect(yield* Models.list).toEqual([{ id: "m1" }])
          expect(yield* Videos.status("t1")).toMatchObject({ _tag: "Succeeded", videoUrl: "https://x/v.mp4" })
        })
    ))
})

describe("fields the contract does not show are read when they can be, never a reason to fail", () => {
  it.live("a task in progress with video_url null and progress as text; the terminal replies likewise", () =>
    Effect.gen(function*() {
      const replies: ReadonlyArray<readonly [unknown, object]> = [
        [{ status: "processing", video_url: null, progress: "45%" }, { _tag: "InProgress", status: "processing", progress: 45 }],
        [{ status: "processing", progress: " 7.5 % " }, { _tag: "InProgress", progress: 7.5 }],
        [{ status: "queued", progress: "soon", video_url: null }, { _tag: "InProgress", status: "queued" }],
        [{ status: "queued", progress: null }, { _tag: "InProgress", status: "queued" }],
        [{ status: "queued", progress: { done: 3, of: 9 } }, { _tag: "InProgress", status: "queued" }],
        [{ status: "succeed", video_url: "https://x/v.mp4", progress: "100%" }, { _tag: "Succeeded", videoUrl: "https://x/v.mp4" }],
        [
          { status: "failed", video_url: null, progress: "12%", reason: "no credits", fail_code: 7 },
          { _tag: "Failed", reason: "no credits", body: JSON.stringify({ status: "failed", video_url: null, progress: "12%", reason: "no credits", fail_code: 7 }) }
        ]
      ]
      for (const [reply, update] of replies) {
        const read = yield* against(replyWith(reply), () => Videos.status("t1"))
        expect(read).toMatchObject(update)
        if (read._tag === "InProgress" && !("progress" in update)) expect(read.progress).toBeUndefined()
      }
    }))

  it.live("progress text that is no number is read in time linear in its length, and a number too large for a double is none", () =>
    Effect.gen(function*() {
      // Spaces between a number and a stray character made the reading quadratic: 200,000 took half a minute.
      const replies: ReadonlyArray<readonly [unknown, number | undefined]> = [
        [`1${" ".repeat(200_000)}x`, undefined],
        [`1${" ".repeat(200_000)}%${" ".repeat(200_000)}x`, undefined],
        ["9".repeat(400), undefined],
        [`12 ${" ".repeat(1000)}% `, 12]
      ]
      for (const [progress, read] of replies) {
        const update = yield* against(replyWith({ status: "processing", progress }), () => Videos.status("t1"))
        expect(update).toMatchObject({ _tag: "InProgress", status: "processing" })
        expect(update._tag === "InProgress" ? update.progress : "terminal").toBe(read)
      }
    }))

  it.live("a succeeded task whose video_url is null has none, and says so", () =>
    Effect.gen(function*() {
      const error = yield* against(replyWith({ status: "succeed", video_url: null }), () => Effect.flip(Videos.status("t1")))
      expect(error).toMatchObject({ _tag: "ResponseDecodeError", message: "task t1 succeeded without a video_url" })
    }))

  it.live("null where a model, embeddings or moderation reply may leave a field out is read as absent", () =>
    against(
      (request, response) => {
        if (request.url === "/v1/moderations") {
          return json(response, 200, { id: null, model: null, results: [{ flagged: false, categories: null, category_scores: { hate: 0.1 } }] })
        }
        if (request.url === "/v1/models") {
          return json(response, 200, { object: null, data: [{ id: "m1", object: null, created: null, owned_by: null }] })
        }
        return json(response, 200, { object: null, model: null, data: [{ object: null, index: null, embedding: [1] }], usage: null })
      },
      () =>
        Effect.gen(function*() {
          expect(yield* Moderations.check("x")).toEqual({ flagged: false, category_scores: { hate: 0.1 } })
          expect(yield* Models.list).toEqual([{ id: "m1" }])
          expect(yield* Embeddings.create({ model: "e", input: "x" })).toEqual({ data: [{ index: 0, embedding: [1] }] })
        })
    ))
})

describe("a reply that does not fit says why, path first", () => {
  const decodeMessage = <R>(body: string, call: Effect.Effect<unknown, { readonly message: string; readonly _tag: string }, R>) =>
    against((_request, response) => json(response, 200, body), () => Effect.flip(call))

  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["a null message", `{"id":"x","choices":[{"message":null}]}`, "choices[0].message: expected an object, got null"],
    ["a missing id", `{"choices":[]}`, "id: is missing"],
    ["a wrong content type", `{"id":"x","choices":[{"message":{"content":5}}]}`, "choices[0].message.content: expected a string or null, got 5"],
    ["not an object", `[1,2]`, "reply: expected an object, got an array"],
    ["not JSON", `<html>`, "reply: is not JSON"]
  ]
  for (const [name, body, reason] of cases) {
    it.live(`Chat.create, ${name}`, () =>
      Effect.gen(function*() {
        const error = yield* decodeMessage(body, Chat.create(hello))
        expect(error._tag).toBe("ResponseDecodeError")
        expect(error.message.startsWith(reason)).toBe(true)
        // then the start of the body, never the schema's type
        expect(error.message).toContain(body.slice(0, 20))
        expect(error.message.length).toBeLessThan(300)
      }))
  }

  it.live("an embedding that is not numbers, a task status without status, a model without id", () =>
    Effect.gen(function*() {
      const embed = yield* decodeMessage(`{"data":[{"embedding":"abc"}]}`, Embeddings.create({ model: "e", input: "x" }))
      expect(embed.message).toMatch(/^data\[0\]\.embedding: expected an array of numbers, got "abc"/)
      const task = yield* decodeMessage(`{"progress":5}`, Videos.status("t"))
      expect(task.message).toMatch(/^status: is missing/)
      const models = yield* decodeMessage(`{"data":[{"name":"m"}]}`, Models.list)
      expect(models.message).toMatch(/^data\[0\]\.id: is missing/)
    }))

  it.live("a stream chunk: path first", () =>
    against(
      (_request, response) => sse(response, `data: {"choices":[{"delta":{"content":7}}]}\n\n`),
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Stream.runDrain(Chat.stream(hello)))
          expect(error._tag).toBe("ResponseDecodeError")
          expect(error.message).toMatch(/^choices\[0\]\.delta\.content: expected a string or null, got 7/)
        })
    ))
})
