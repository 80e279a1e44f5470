import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as Emulator from "../src/Emulator.js"
import { accumulate, at, chat, chunks, completion, events, message, rawChunks } from "./utils.js"

const run = Effect.provide(Emulator.layer())

const tools = [{
  type: "function",
  function: {
    name: "lookup",
    parameters: { type: "object", properties: { query: { type: "string" }, limit: { type: "integer" } }, required: ["query"] }
  }
}, {
  type: "function",
  function: { name: "ping", parameters: { type: "object", properties: {} } }
}]

const question = { messages: [{ role: "user", content: "Tell me something about streams" }] }

describe("streaming", () => {
  it.effect("streams the same content as the non-streamed reply, in small chunks", () =>
    Effect.gen(function*() {
      const plain = yield* chat(question)
      const streamed = yield* chat({ ...question, stream: true })
      expect(streamed.status).toBe(200)
      expect(streamed.headers.get("content-type")).toContain("text/event-stream")
      expect(streamed.headers.get("x-request-id")).toBe("req_000002")
      const all = events(streamed.text)
      expect(all.at(-1)).toBe("[DONE]")
      const raw = rawChunks(streamed.text)
      expect(at(raw[0], "choices", 0, "delta")).toEqual({ role: "assistant", content: "" })
      expect(at(raw.at(-1), "choices", 0)).toEqual({ index: 0, delta: {}, finish_reason: "stop" })
      const parsed = chunks(streamed.text)
      expect(parsed.every((c) => c.object === "chat.completion.chunk" && c.id === parsed[0]!.id)).toBe(true)
      const content = parsed.slice(1, -1).map((c) => c.choices[0]!.delta.content ?? "")
      expect(content.length).toBeGreaterThan(20)
      expect(content.every((piece) => Array.from(piece).length <= 4)).toBe(true)
      expect(parsed.slice(0, -1).every((c) => c.choices[0]!.finish_reason === null)).toBe(true)
      expect(accumulate(streamed.text).content).toBe(message(plain).content)
    }).pipe(run))

  it.effect("sends a usage chunk when stream_options.include_usage is set", () =>
    Effect.gen(function*() {
      const plain = yield* chat(question)
      const streamed = yield* chat({ ...question, stream: true, stream_options: { include_usage: true } })
      const parsed = chunks(streamed.text)
      expect(parsed.at(-1)!.choices).toEqual([])
      expect(parsed.at(-1)!.usage).toEqual(completion(plain).usage)
      expect(parsed.at(-2)!.choices[0]!.finish_reason).toBe("stop")
      const without = chunks((yield* chat({ ...question, stream: true })).text)
      expect(without.some((c) => c.usage !== undefined)).toBe(false)
    }).pipe(run))

  it.effect("streams tool calls as deltas that accumulate to the non-streamed calls", () =>
    Effect.gen(function*() {
      const body = { tools, messages: [{ role: "user", content: "lookup and ping" }] }
      const plain = yield* chat(body)
      const streamed = yield* chat({ ...body, stream: true })
      const raw = rawChunks(streamed.text)
      expect(at(raw[0], "choices", 0, "delta")).toEqual({ role: "assistant", content: null })
      const deltas = raw.flatMap((c) => (at(c, "choices", 0, "delta", "tool_calls") as ReadonlyArray<unknown> | undefined) ?? [])
      const calls = message(plain).tool_calls!
      expect(deltas[0]).toEqual({
        index: 0,
        id: calls[0]!.id,
        type: "function",
        function: { name: "lookup", arguments: "" }
      })
      expect(deltas[1]).toEqual({ index: 0, function: { arguments: expect.any(String) } })
      const folded = accumulate(streamed.text)
      expect(folded.calls).toEqual(calls)
      expect(folded.finish).toBe("tool_calls")
    }).pipe(run))

  it.effect("uses the configured chunk size", () =>
    Effect.gen(function*() {
      const parsed = chunks((yield* chat({ ...question, stream: true })).text)
      expect(parsed[1]!.choices[0]!.delta.content).toBe("You said:")
    }).pipe(Effect.provide(Emulator.layer({ stream: { chunkSize: 9 } }))))

  it.effect("paces events on the runtime's clock", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const plain = yield* chat(question)
      const fiber = yield* Effect.forkChild(chat({ ...question, stream: true }))
      yield* emulator.awaitRequests(2)
      yield* TestClock.adjust("1 hour")
      const streamed = yield* Fiber.join(fiber)
      expect(accumulate(streamed.text).content).toBe(message(plain).content)
    }).pipe(Effect.provide(Emulator.layer({ stream: { interval: "1 second" } }))))
})
