/**
 * Errors that read right (issue 14): the service's message from every common
 * error shape, stream errors that say whether they were cut, and a final
 * event that arrives without its blank line.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, Embeddings, Models, type Protocol, type SwitchboardError, Videos } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { against, apiKey, json, sse } from "./hostile.js"

const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } satisfies Protocol.ChatRequest
const chunk = (delta: object, finish: string | null = null) =>
  JSON.stringify({ id: "x", choices: [{ index: 0, delta, finish_reason: finish }] })

describe("the service's message from every common error shape", () => {
  const shapes: ReadonlyArray<readonly [string, unknown]> = [
    ["{error: {message}}", { error: { message: "the model is busy", type: "server_error" } }],
    ["{error: text}", { error: "the model is busy" }],
    ["{message: text}", { message: "the model is busy" }],
    ["{detail: text}", { detail: "the model is busy" }],
    ["{detail: [{msg}]}", { detail: [{ loc: ["body"], msg: "the model is busy" }] }],
    ["{errors: [{message}]}", { errors: [{ message: "the model is busy" }] }]
  ]
  for (const [name, body] of shapes) {
    it.live(name, () =>
      against((_request, response) => json(response, 503, body), () =>
        Effect.gen(function*() {
          expect(yield* Effect.flip(Chat.create(hello))).toMatchObject({ _tag: "ServerError", message: "the model is busy" })
          expect(yield* Effect.flip(Stream.runDrain(Chat.stream(hello)))).toMatchObject({ _tag: "ServerError", message: "the model is busy" })
        }), { maxRetries: 0 }))
  }

  it.live("a 200 JSON error body on a stream is a StreamError with the service's message", () =>
    against((_request, response) => json(response, 200, { error: { message: "quota exceeded", code: "quota" } }), () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Stream.runDrain(Chat.stream(hello)))
        expect(error).toMatchObject({ _tag: "StreamError", reason: "error-event", message: "quota exceeded" })
      })))

  it.live("a 200 JSON error body on a call: the service's message as message, the rest in the other fields", () =>
    against(
      (_request, response) =>
        json(response, 200, { error: { message: `quota exceeded for this key (${apiKey})`, type: "billing", code: "quota" } }, {
          "x-request-id": "req_200"
        }),
      () =>
        Effect.gen(function*() {
          const calls: ReadonlyArray<Effect.Effect<unknown, SwitchboardError.SwitchboardError, Chat.Chat | Models.Models | Embeddings.Embeddings>> = [
            Chat.create(hello),
            Models.list,
            Embeddings.create({ model: "e", input: "x" })
          ]
          for (const call of calls) {
            const error = yield* Effect.flip(call)
            expect(error).toMatchObject({
              _tag: "ResponseDecodeError",
              message: "quota exceeded for this key ([redacted])",
              status: 200,
              requestId: "req_200",
              type: "billing",
              code: "quota"
            })
            expect((error as { body: string }).body).toContain("quota exceeded for this key ([redacted])")
          }
        })
    ))

  it.live("a failed task's reason from the usual fields, the status reply kept", () =>
    Effect.gen(function*() {
      const replies: ReadonlyArray<unknown> = [
        { status: "failed", reason: "no credits" },
        { status: "failed", fail_reason: "no credits" },
        { status: "failed", error: "no credits" },
        { status: "failed", error: { message: "no credits", code: 7 } },
        { status: "failed", message: "no credits" }
      ]
      for (const reply of replies) {
        yield* against(
          (request, response) =>
            request.url === "/v1/chat/task/status" ? json(response, 200, reply) : json(response, 200, { id: "task_1", choices: [{ message: { content: "ok" } }] }),
          () =>
            Effect.gen(function*() {
              const error = yield* Effect.flip(Videos.generate({ model: "video-1", prompt: "a fox" }, { schedule: Schedule.forever }))
              expect(error).toMatchObject({ _tag: "TaskFailedError", reason: "no credits", body: JSON.stringify(reply) })
            })
        )
      }
    }))
})

describe("stream errors say what happened", () => {
  it.live("a plain-text error event is a StreamError with its text", () =>
    against((_request, response) => sse(response, `data: ${chunk({ content: "Hi" })}\n\nevent: error\ndata: upstream timed out\n\n`), () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Stream.runDrain(Chat.stream(hello)))
        expect(error).toMatchObject({ _tag: "StreamError", reason: "error-event", message: "upstream timed out" })
      })))

  it.live("a cut stream says cut; an error event says error-event", () =>
    Effect.gen(function*() {
      yield* against((_request, response) => sse(response, `data: ${chunk({ content: "Hi" })}\n\n`), () =>
        Effect.map(Effect.flip(Stream.runDrain(Chat.stream(hello))), (error) => expect(error).toMatchObject({ _tag: "StreamError", reason: "cut" })))
      yield* against((_request, response) => sse(response, `data: {"error":{"message":"overloaded"}}\n\n`), () =>
        Effect.map(Effect.flip(Stream.runDrain(Chat.stream(hello))), (error) =>
          expect(error).toMatchObject({ _tag: "StreamError", reason: "error-event", message: "overloaded" })))
    }))

  it.live("a complete final event without its blank line (the connection closed right after) is delivered", () =>
    against((_request, response) => sse(response, `data: ${chunk({ content: "Hi" })}\n\ndata: ${chunk({}, "stop")}`), () =>
      Effect.gen(function*() {
        const completion = yield* Chat.accumulate(Chat.stream(hello))
        expect(completion.choices[0]).toMatchObject({ message: { content: "Hi" }, finish_reason: "stop" })
      })))

  it.live("an incomplete final event is a cut, not a broken chunk", () =>
    against((_request, response) => sse(response, `data: ${chunk({ content: "Hi" })}\n\ndata: ${chunk({}, "stop").slice(0, 30)}`), () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Chat.accumulate(Chat.stream(hello)))
        expect(error).toMatchObject({ _tag: "StreamError", reason: "cut" })
      })))
})
