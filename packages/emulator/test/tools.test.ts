import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Emulator from "../src/Emulator.js"
import { chat, completion, message, type Reply } from "./utils.js"

const run = Effect.provide(Emulator.layer())

const tool = (name: string, properties: Record<string, unknown>, required: ReadonlyArray<string> = []) => ({
  type: "function",
  function: { name, description: name, parameters: { type: "object", properties, required } }
})

const tools = [
  tool("get_weather", { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] }, days: { type: "integer" } }, ["city"]),
  tool("get_time", { zone: { type: "string" } }, ["zone"]),
  tool("ping", {})
]

/** The conversation continued with the model's message and one tool message per call. */
const answer = (messages: ReadonlyArray<unknown>, reply: Reply, results: ReadonlyArray<string>) => [
  ...messages,
  message(reply),
  ...(message(reply).tool_calls ?? []).map((call, i) => ({ role: "tool", tool_call_id: call.id, content: results[i] ?? "ok" }))
]

describe("tool rule", () => {
  it.effect("calls every tool named in one segment in parallel, in text order", () =>
    Effect.gen(function*() {
      const reply = yield* chat({ tools, messages: [{ role: "user", content: "Use get_time and get_weather please" }] })
      expect(completion(reply).choices[0]!.finish_reason).toBe("tool_calls")
      const calls = message(reply).tool_calls!
      expect(message(reply).content).toBeNull()
      expect(calls.map((c) => c.function.name)).toEqual(["get_time", "get_weather"])
      expect(calls.map((c) => c.type)).toEqual(["function", "function"])
      expect(JSON.parse(calls[1]!.function.arguments)).toEqual({ city: "sample city", unit: "c", days: 42 })
      expect(calls[0]!.id).toMatch(/^call_0_0_[0-9a-z]{6}$/)
      expect(calls[1]!.id).toMatch(/^call_0_1_[0-9a-z]{6}$/)
      const again = yield* chat({ tools, messages: [{ role: "user", content: "Use get_time and get_weather please" }] })
      expect(message(again).tool_calls).toEqual(calls)
    }).pipe(run))

  it.effect("runs `A then B` as two steps, feeding A's result to B, then quotes every result", () =>
    Effect.gen(function*() {
      const start = [{ role: "user", content: "Call get_weather then get_time with get_weather's result" }]
      const first = yield* chat({ tools, messages: start })
      expect(message(first).tool_calls!.map((c) => c.function.name)).toEqual(["get_weather"])
      const afterFirst = answer(start, first, [`{"temp":21}`])
      const second = yield* chat({ tools, messages: afterFirst })
      const [call] = message(second).tool_calls!
      expect(call!.function.name).toBe("get_time")
      expect(JSON.parse(call!.function.arguments)).toEqual({ zone: `{"temp":21}` })
      expect(call!.id).not.toBe(message(first).tool_calls![0]!.id)
      const final = yield* chat({ tools, messages: answer(afterFirst, second, ["12:00"]) })
      expect(completion(final).choices[0]!.finish_reason).toBe("stop")
      expect(message(final).content).toBe(`Tool results: get_weather → {"temp":21}; get_time → "12:00".`)
    }).pipe(run))

  it.effect("uses name({...}) arguments verbatim, one call per such mention", () =>
    Effect.gen(function*() {
      const reply = yield* chat({
        tools,
        messages: [{ role: "user", content: `Compare get_weather({"city": "Paris"}) with get_weather({"city":"Oslo","unit":"f"})` }]
      })
      expect(message(reply).tool_calls!.map((c) => c.function.arguments)).toEqual([`{"city": "Paris"}`, `{"city":"Oslo","unit":"f"}`])
    }).pipe(run))

  it.effect("sends invalid arguments once and re-sends the call after an error result", () =>
    Effect.gen(function*() {
      const start = [{ role: "user", content: "Call get_weather with invalid arguments" }]
      const first = yield* chat({ tools, messages: start })
      const [bad] = message(first).tool_calls!
      expect(JSON.parse(bad!.function.arguments)).toEqual({ unit: "c", days: 42 })
      const afterError = answer(start, first, ["Error: missing required property city"])
      const retry = yield* chat({ tools, messages: afterError })
      const [good] = message(retry).tool_calls!
      expect(good!.function.name).toBe("get_weather")
      expect(good!.id).not.toBe(bad!.id)
      expect(JSON.parse(good!.function.arguments)).toEqual({ city: "sample city", unit: "c", days: 42 })
      const final = yield* chat({ tools, messages: answer(afterError, retry, [`{"temp":3}`]) })
      expect(message(final).content).toBe(
        `Tool results: get_weather → "Error: missing required property city"; get_weather → {"temp":3}.`
      )
    }).pipe(run))

  it.effect("moves on when the invalid call's result is not an error, and sends `{` without required fields", () =>
    Effect.gen(function*() {
      const start = [{ role: "user", content: "ping invalid" }]
      const first = yield* chat({ tools, messages: start })
      expect(message(first).tool_calls![0]!.function.arguments).toBe("{")
      const next = yield* chat({ tools, messages: answer(start, first, ["pong"]) })
      expect(message(next).content).toBe(`Tool results: ping → "pong".`)
    }).pipe(run))

  it.effect("honours tool_choice none, required and a named function", () =>
    Effect.gen(function*() {
      const named = [{ role: "user", content: "Use get_weather" }]
      const none = yield* chat({ tools, tool_choice: "none", messages: named })
      expect(message(none).content).toContain(`You said: "Use get_weather".`)
      const plain = [{ role: "user", content: "Hello" }]
      const auto = yield* chat({ tools, messages: plain })
      expect(message(auto).tool_calls).toBeUndefined()
      const required = yield* chat({ tools, tool_choice: "required", messages: plain })
      expect(message(required).tool_calls!.map((c) => c.function.name)).toEqual(["get_weather"])
      const forced = yield* chat({
        tools,
        tool_choice: { type: "function", function: { name: "get_time" } },
        messages: [{ role: "user", content: "Use get_weather then ping" }]
      })
      expect(message(forced).tool_calls!.map((c) => c.function.name)).toEqual(["get_time"])
      const done = yield* chat({
        tools,
        tool_choice: { type: "function", function: { name: "get_time" } },
        messages: answer([{ role: "user", content: "Use get_weather then ping" }], forced, ["noon"])
      })
      expect(message(done).content).toBe(`Tool results: get_time → "noon".`)
    }).pipe(run))

  it.effect("gives each turn of a conversation its own call ids", () =>
    Effect.gen(function*() {
      const turn = [{ role: "user", content: "ping" }]
      const first = yield* chat({ tools, messages: turn })
      const answered = answer(turn, first, ["pong"])
      const text = yield* chat({ tools, messages: answered })
      const again = yield* chat({ tools, messages: [...answered, message(text), { role: "user", content: "ping" }] })
      expect(message(again).tool_calls![0]!.id).not.toBe(message(first).tool_calls![0]!.id)
    }).pipe(run))
})
