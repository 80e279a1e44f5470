/**
 * Quirks of real services' streams and replies (issue 27), over HTTP from a
 * `node:http` server: a tool name split across deltas, `null` where a field
 * is absent. One fold (`ChatFold`) reads them for every path.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { against, json } from "./hostile.js"

const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } satisfies Protocol.ChatRequest

/** Server-sent events of `chunks`, then `[DONE]`. */
const events = (chunks: ReadonlyArray<unknown>) =>
  chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n"

const streaming = (chunks: ReadonlyArray<unknown>) => (_request: unknown, response: import("node:http").ServerResponse) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  response.end(events(chunks))
}

const call = (delta: Record<string, unknown>) => ({ id: "x", choices: [{ index: 0, delta: { tool_calls: [delta] } }] })
const finish = { id: "x", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }

/** The completion by `accumulate`, and by `streamWithCompletion`: both must agree. */
const bothFolds = Effect.gen(function*() {
  const accumulated = yield* Chat.accumulate(Chat.stream(hello))
  const parts = yield* Stream.runCollect(Chat.streamWithCompletion(hello))
  const last = (parts).at(-1)
  expect(last?._tag === "Completion" && last.completion).toEqual(accumulated)
  return accumulated
})

describe("a tool name in several deltas", () => {
  it.live("split: get_ then weather is get_weather", () =>
    against(
      streaming([
        call({ index: 0, id: "call_1", type: "function", function: { name: "get_", arguments: "" } }),
        call({ index: 0, function: { name: "weather" } }),
        call({ index: 0, function: { arguments: `{"city":"Paris"}` } }),
        finish
      ]),
      () =>
        Effect.map(bothFolds, (completion) =>
          expect(completion.choices[0]?.message.tool_calls).toEqual([
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: `{"city":"Paris"}` } }
          ]))
    ))

  it.live("restated whole in every delta: once", () =>
    against(
      streaming([
        call({ index: 0, id: "call_1", function: { name: "get_weather", arguments: `{"city":` } }),
        call({ index: 0, id: "call_1", function: { name: "get_weather", arguments: `"Paris"}` } }),
        finish
      ]),
      () => Effect.map(bothFolds, (completion) => expect(completion.choices[0]?.message.tool_calls?.[0]?.function.name).toBe("get_weather"))
    ))

  it.live("restated growing (get_, then get_weather): get_weather", () =>
    against(
      streaming([
        call({ index: 0, id: "call_1", function: { name: "get_" } }),
        call({ index: 0, function: { name: "get_weather", arguments: "{}" } }),
        finish
      ]),
      () => Effect.map(bothFolds, (completion) => expect(completion.choices[0]?.message.tool_calls?.[0]?.function.name).toBe("get_weather"))
    ))
})

describe("null where a field is absent", () => {
  it.live("in stream chunks: every field of a chunk, a choice, a delta and a tool-call delta", () =>
    against(
      streaming([
        {
          id: "x",
          object: null,
          created: null,
          model: null,
          system_fingerprint: null,
          usage: null,
          choices: [{
            index: 0,
            logprobs: null,
            finish_reason: null,
            delta: { role: "assistant", content: null, refusal: null, function_call: null, tool_calls: null }
          }]
        },
        { id: null, choices: [{ index: null, delta: { role: null, content: "Hi", tool_calls: null, function_call: null } }] },
        call({ index: 0, id: "call_1", type: null, function: { name: "get_weather", arguments: null } }),
        call({ index: 0, id: null, type: null, function: { name: null, arguments: "{}" } }),
        { id: "x", choices: [{ index: 0, delta: null, finish_reason: "tool_calls", logprobs: null }] },
        { id: "x", choices: [], usage: { prompt_tokens: 1, completion_tokens: null, total_tokens: 1 } }
      ]),
      () =>
        Effect.map(bothFolds, (completion) => {
          expect(completion.choices).toEqual([{
            index: 0,
            message: {
              role: "assistant",
              content: "Hi",
              tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{}" } }]
            },
            finish_reason: "tool_calls"
          }])
          expect(completion.usage).toEqual({ prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 })
        })
    ))

  it.live("in a completion: message, tool call, choice and usage fields", () =>
    against(
      (_request, response) =>
        json(response, 200, {
          id: "x",
          object: null,
          created: null,
          model: null,
          system_fingerprint: null,
          choices: [
            {
              index: null,
              logprobs: null,
              finish_reason: "stop",
              message: { role: null, content: "Hi", refusal: null, tool_calls: null, function_call: null, name: null }
            },
            {
              index: 1,
              finish_reason: null,
              message: {
                role: "assistant",
                content: null,
                tool_calls: [{ id: "call_1", type: null, function: { name: "f", arguments: "{}" } }]
              }
            }
          ],
          usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, prompt_tokens_details: null }
        }),
      () =>
        Effect.map(Chat.create(hello), (completion) => {
          expect(completion.choices[0]).toMatchObject({ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" })
          expect(completion.choices[0]?.message.tool_calls).toBeUndefined()
          expect(completion.choices[1]?.message.tool_calls).toEqual([{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }])
        })
    ))
})
