import * as ChatFold from "@switchboard/core/ChatFold"
import type * as Protocol from "@switchboard/core/Protocol"
import { describe, expect, it } from "vitest"

const chunk = (choices: Protocol.ChatCompletionChunk["choices"]): Protocol.ChatCompletionChunk =>
  ({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices }) as Protocol.ChatCompletionChunk

/** Adds chunks until the fold refuses one; the count added, or undefined if none was refused. */
const refusedAfter = (fold: ChatFold.Fold, make: (i: number) => Protocol.ChatCompletionChunk, most: number) => {
  for (let i = 0; i < most; i++) if (fold.add(make(i))) return i
  return undefined
}

describe("ChatFold", () => {
  // Issue 33, case 6: one string (and array slot) per 2-character delta held
  // 17.6 bytes a character. Joined as it goes, a fold holds at most one
  // string per `joinEvery` deltas, whatever their size.
  it("joins as it goes: 2-character deltas of content, refusal and arguments are not held one string each", () => {
    const fold = ChatFold.make({ maxCharacters: 32 * 1024 * 1024 })
    const deltas = 200_000
    fold.add(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: "" } }] }, finish_reason: null }]))
    for (let i = 0; i < deltas; i++) {
      const piece = String.fromCharCode(0x4e00 + (i % 500), 0x4e00 + ((i * 7) % 500))
      fold.add(chunk([{ index: 0, delta: { content: piece, refusal: piece, tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }]))
    }
    expect(fold.size()).toBe(3 * 2 * deltas + 1)
    expect(fold.pieces()).toBeLessThanOrEqual(3 * 2 * 256)
    const completion = fold.completion()
    expect(completion._tag).toBe("Success")
    const message = completion._tag === "Success" ? completion.success.choices[0]!.message : undefined
    expect(message?.content).toHaveLength(2 * deltas)
    expect(message?.refusal).toHaveLength(2 * deltas)
    expect(message?.tool_calls?.[0]?.function.arguments).toHaveLength(2 * deltas)
    expect(message?.content?.slice(0, 4)).toBe(String.fromCharCode(0x4e00, 0x4e00, 0x4e01, 0x4e07))
  })

  // A server can send empty deltas that each open a new choice or tool call:
  // no characters, but each held in memory. They count against the limit.
  it("bounds the choices a stream opens, with content or without", () => {
    for (const content of [true, false]) {
      const fold = ChatFold.make({ maxCharacters: 10_000, content })
      const at = refusedAfter(fold, (i) => chunk([{ index: i, delta: {}, finish_reason: null }]), 1_000_000)
      expect(at).toBeDefined()
      expect(at).toBe(ChatFold.maxOpened)
    }
  })

  it("bounds the tool calls a stream opens", () => {
    const fold = ChatFold.make({ maxCharacters: 10_000 })
    const at = refusedAfter(
      fold,
      (i) => chunk([{ index: 0, delta: { tool_calls: [{ index: i }] }, finish_reason: null }]),
      1_000_000
    )
    expect(at).toBeDefined()
    expect(at).toBe(ChatFold.maxOpened - 1) // the choice they belong to is the other one
  })

  it("an ordinary stream of one choice and a tool call stays within a small limit", () => {
    const fold = ChatFold.make({ maxCharacters: 100 })
    expect(fold.add(chunk([{ index: 0, delta: { role: "assistant", content: "Hi" }, finish_reason: null }]))).toBeUndefined()
    expect(fold.add(chunk([{
      index: 0,
      delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "get_", arguments: "{" } }] },
      finish_reason: null
    }]))).toBeUndefined()
    expect(fold.add(chunk([{
      index: 0,
      delta: { tool_calls: [{ index: 0, function: { name: "weather", arguments: "}" } }] },
      finish_reason: "tool_calls"
    }]))).toBeUndefined()
    const completion = fold.completion()
    expect(completion._tag).toBe("Success")
    if (completion._tag === "Success") {
      expect(completion.success.choices[0]?.message.tool_calls?.[0]?.function).toEqual({ name: "get_weather", arguments: "{}" })
    }
  })
})
