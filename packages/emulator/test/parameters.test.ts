/**
 * The request fields of the chat format beyond the contract's (issue 27):
 * `max_completion_tokens`, `n`, and the ranges of the sampling parameters.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Emulator from "../src/Emulator.js"
import { at, chat, chunks, completion, errorOf, message, rawChunks } from "./utils.js"

const run = Effect.provide(Emulator.layer())
const hello = [{ role: "user", content: "Hello there" }]

describe("parameters", () => {
  it.effect("max_completion_tokens cuts the reply like max_tokens", () =>
    Effect.gen(function*() {
      const reply = yield* chat({ messages: hello, max_completion_tokens: 3 })
      expect(message(reply).content).toBe(`You said: "Hello`)
      expect(completion(reply).choices[0]!.finish_reason).toBe("length")
      // Both given: the smaller applies.
      const both = yield* chat({ messages: hello, max_tokens: 2, max_completion_tokens: 5 })
      expect(message(both).content).toBe(`You said:`)
    }).pipe(run))

  it.effect("n gives n choices, each with its index, and usage counts them all", () =>
    Effect.gen(function*() {
      const one = completion(yield* chat({ messages: hello }))
      const reply = completion(yield* chat({ messages: hello, n: 3 }))
      expect(reply.choices.map((c) => c.index)).toEqual([0, 1, 2])
      expect(reply.choices[0]!.message.content).toBe(one.choices[0]!.message.content)
      expect(new Set(reply.choices.map((c) => c.message.content)).size).toBe(3)
      const words = reply.choices.reduce((sum, c) => sum + (c.message.content ?? "").split(/\s+/).length, 0)
      expect(reply.usage).toEqual({ prompt_tokens: 2, completion_tokens: words, total_tokens: 2 + words })
    }).pipe(run))

  it.effect("n streams interleave the choices, each chunk naming its index", () =>
    Effect.gen(function*() {
      const plain = completion(yield* chat({ messages: hello, n: 2 }))
      const streamed = yield* chat({ messages: hello, n: 2, stream: true, stream_options: { include_usage: true } })
      const parsed = chunks(streamed.text)
      const indices = parsed.flatMap((c) => c.choices.map((choice) => choice.index))
      expect(indices.slice(0, 4)).toEqual([0, 1, 0, 1])
      for (const index of [0, 1]) {
        const mine = parsed.flatMap((c) => c.choices.filter((choice) => choice.index === index))
        expect(mine.map((choice) => choice.delta.content ?? "").join("")).toBe(plain.choices[index]!.message.content)
        expect(mine.at(-1)!.finish_reason).toBe("stop")
      }
      expect(parsed.at(-1)!.usage).toEqual(plain.usage)
    }).pipe(run))

  it.effect("n streams keep their index in minimal mode", () =>
    Effect.gen(function*() {
      const streamed = yield* chat({ messages: hello, n: 2, stream: true })
      const raw = rawChunks(streamed.text)
      expect(raw.slice(0, 2).map((c) => at(c, "choices", 0, "index"))).toEqual([0, 1])
    }).pipe(Effect.provide(Emulator.layer({ minimal: true }))))

  it.effect("a value out of its range is a 400 naming the field", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, unknown, string]> = [
        ["temperature", 5, "between 0 and 2"],
        ["temperature", -0.1, "between 0 and 2"],
        ["top_p", 1.5, "between 0 and 1"],
        ["n", 0, "must be"],
        ["n", 129, "between 1 and 128"],
        ["presence_penalty", 2.5, "between -2 and 2"],
        ["frequency_penalty", -3, "between -2 and 2"],
        ["frequency_penalty", "high", "must be a number"],
        ["max_completion_tokens", 0, "must be"],
        ["max_completion_tokens", 2.5, "must be"],
        ["max_tokens", -1, "must be"]
      ]
      for (const [field, value, says] of cases) {
        const reply = yield* chat({ messages: hello, [field]: value })
        expect(reply.status, `${field} = ${JSON.stringify(value)}`).toBe(400)
        const error = errorOf(reply)
        expect(error).toMatchObject({ type: "invalid_request_error", param: field, code: "invalid_value" })
        expect(error.message).toContain(`'${field}'`)
        expect(error.message).toContain(says)
      }
      for (const [field, value] of [["temperature", 2], ["temperature", 0], ["top_p", 1], ["presence_penalty", -2], ["n", 128]] as const) {
        expect((yield* chat({ messages: hello, [field]: value })).status, `${field} = ${value}`).toBe(200)
      }
    }).pipe(run))
  it.effect("an unknown role or content part type is a 400 naming that field and the value sent", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [unknown, string, string]> = [
        [[{ role: "robot", content: "Hi" }], "messages[0].role", `"robot"`],
        [[{ role: "user", content: [{ type: "video", video: "x" }] }], "messages[0].content[0].type", `"video"`],
        [[hello[0], { role: "user", content: [{ type: "text", text: "a" }, { type: "sound" }] }], "messages[1].content[1].type", `"sound"`]
      ]
      for (const [messages, field, value] of cases) {
        const reply = yield* chat({ messages })
        expect(reply.status, field).toBe(400)
        const error = errorOf(reply)
        expect(error).toMatchObject({ type: "invalid_request_error", param: field, code: "invalid_value" })
        expect(error.message).toContain(`'${field}'`)
        expect(error.message).toContain(value)
      }
    }).pipe(run))
})
