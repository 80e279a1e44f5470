/**
 * What goes on a span by the GenAI conventions (`internal/genAi.ts`): the
 * request parameters a backend filters on, the server, the streamed reply's
 * facts, and the message contents recorded on opt-in.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ChatFold from "../src/ChatFold.js"
import * as GenAi from "../src/internal/genAi.js"
import type * as Protocol from "../src/Protocol.js"

const user = (content: Protocol.ChatRequest["messages"][number]["content"]) => ({ role: "user" as const, content }) as Protocol.Message

describe("request attributes", () => {
  it("only the parameters the request sets, under their conventional names", () => {
    expect(GenAi.chatRequest({ model: "m", messages: [user("hi")] }, false)).toEqual({ "gen_ai.request.stream": false })
    expect(
      GenAi.chatRequest(
        { model: "m", messages: [user("hi")], max_tokens: 9, temperature: 0, top_p: 1, seed: 3, stop: "END", n: 2 },
        true
      )
    ).toEqual({
      "gen_ai.request.stream": true,
      "gen_ai.request.max_tokens": 9,
      "gen_ai.request.temperature": 0,
      "gen_ai.request.top_p": 1,
      "gen_ai.request.seed": 3,
      "gen_ai.request.stop_sequences": ["END"],
      "gen_ai.request.choice.count": 2
    })
  })

  it("max_completion_tokens is the request's max_tokens; with both, the smaller applies, as the service reads them", () => {
    const attribute = (limits: Pick<Protocol.ChatRequest, "max_tokens" | "max_completion_tokens">) =>
      GenAi.chatRequest({ model: "m", messages: [user("hi")], ...limits }, false)["gen_ai.request.max_tokens"]
    expect(attribute({ max_completion_tokens: 7 })).toBe(7)
    expect(attribute({ max_tokens: 9, max_completion_tokens: 7 })).toBe(7)
    expect(attribute({ max_tokens: 5, max_completion_tokens: 7 })).toBe(5)
  })

  it("the output type: what a media call asks for, else json for a JSON response format", () => {
    const json = { model: "m", messages: [user("hi")], response_format: { type: "json_object" as const } }
    expect(GenAi.chatRequest(json, false)["gen_ai.output.type"]).toBe("json")
    expect(GenAi.chatRequest(json, false, "image")["gen_ai.output.type"]).toBe("image")
    expect(GenAi.chatRequest({ model: "m", messages: [user("hi")] }, false)["gen_ai.output.type"]).toBeUndefined()
  })

  it("span names: operation and model, or the operation alone", () => {
    expect(GenAi.spanName("chat", "gpt-4o")).toBe("chat gpt-4o")
    expect(GenAi.spanName("list_models", undefined)).toBe("list_models")
  })

  it("server.address and server.port: the scheme's port when the URL has none; an IPv6 host without brackets", () => {
    expect(GenAi.serverOf("https://api.example.com/v1")).toEqual({ address: "api.example.com", port: 443 })
    expect(GenAi.serverOf("http://api.example.com/v1")).toEqual({ address: "api.example.com", port: 80 })
    expect(GenAi.serverOf("http://[::1]:8787/v1")).toEqual({ address: "::1", port: 8787 })
  })
})

describe("a streamed reply's facts", () => {
  const chunk = (fields: Partial<Protocol.ChatCompletionChunk>): Protocol.ChatCompletionChunk => ({ choices: [], ...fields })

  it("first id and model, finish reasons by choice index, the last usage, time to first chunk in seconds", () => {
    const facts = new GenAi.ChunkFacts(false)
    facts.add(chunk({ id: "a", model: "m1", choices: [{ index: 1, delta: { content: "x" }, finish_reason: null }] }), 250)
    facts.add(chunk({ id: "b", model: "m2", choices: [{ index: 1, delta: {}, finish_reason: "length" }] }), 400)
    facts.add(chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }), 500)
    facts.add(chunk({ usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } }), 600)
    expect(facts.reply()).toEqual({
      attributes: {
        "gen_ai.response.id": "a",
        "gen_ai.response.model": "m1",
        "gen_ai.response.finish_reasons": ["stop", "length"],
        "gen_ai.usage.input_tokens": 3,
        "gen_ai.usage.output_tokens": 5,
        "gen_ai.response.time_to_first_chunk": 0.25
      },
      usage: { input: 3, output: 5 }
    })
  })

  // A server that opens a new choice in every chunk must not grow what the span keeps without bound.
  it("stop gathering past ChatFold.maxOpened choices: the span keeps what came before", () => {
    const facts = new GenAi.ChunkFacts(false)
    for (let index = 0; index < ChatFold.maxOpened + 1_000; index++) {
      facts.add(chunk({ id: "a", choices: [{ index, delta: {}, finish_reason: "stop" }] }), 1)
    }
    facts.add(chunk({ usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } }), 2)
    const { attributes, usage } = facts.reply()
    expect(attributes["gen_ai.response.id"]).toBe("a")
    expect((attributes["gen_ai.response.finish_reasons"] as ReadonlyArray<string>).length).toBe(ChatFold.maxOpened + 1)
    expect(usage).toBeUndefined()
  })

  it("no chunk: no attributes", () => {
    expect(new GenAi.ChunkFacts(false).reply()).toEqual({ attributes: {} })
  })

  it("the text is gathered only when contents are recorded", () => {
    const text = (keep: boolean) => {
      const facts = new GenAi.ChunkFacts(keep)
      facts.add(chunk({ choices: [{ index: 0, delta: { content: "Hel" }, finish_reason: null }] }), 1)
      facts.add(chunk({ choices: [{ index: 0, delta: { content: "lo" }, finish_reason: "stop" }] }), 2)
      return JSON.parse(String(facts.output()["gen_ai.output.messages"]))
    }
    expect(text(true)).toEqual([{ role: "assistant", parts: [{ type: "text", content: "Hello" }], finish_reason: "stop" }])
    expect(new GenAi.ChunkFacts(false).output()).toEqual({})
  })

  it("tool calls are folded as Chat.accumulate folds them: a name split across deltas comes whole", () => {
    const facts = new GenAi.ChunkFacts(true)
    const call = (delta: Protocol.ToolCallDelta, finish: string | null = null) =>
      chunk({ choices: [{ index: 0, delta: { tool_calls: [delta] }, finish_reason: finish }] })
    facts.add(call({ index: 0, id: "call_1", function: { name: "get_" } }), 1)
    facts.add(call({ index: 0, function: { name: "weather", arguments: "{}" } }, "tool_calls"), 2)
    expect(JSON.parse(String(facts.output()["gen_ai.output.messages"]))).toEqual([{
      role: "assistant",
      parts: [{ type: "tool_call", id: "call_1", name: "get_weather", arguments: "{}" }],
      finish_reason: "tool_calls"
    }])
  })
})

describe("message contents", () => {
  it("every role in the conventions' shape; an image's data URL reduced to its type and length", () => {
    const dataUrl = `data:image/png;base64,${"A".repeat(1000)}`
    const messages: ReadonlyArray<Protocol.Message> = [
      { role: "system", content: "Be brief" },
      user([{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: dataUrl } }]),
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "look", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "a cat" }
    ]
    const json = GenAi.inputMessages({ model: "m", messages })["gen_ai.input.messages"]
    expect(JSON.parse(String(json))).toEqual([
      { role: "system", parts: [{ type: "text", content: "Be brief" }] },
      {
        role: "user",
        parts: [
          { type: "text", content: "What is this?" },
          { type: "uri", modality: "image", uri: `data:image/png;base64,… (${dataUrl.length} characters)` }
        ]
      },
      { role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "look", arguments: "{}" }] },
      { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: "a cat" }] }
    ])
    expect(String(json)).not.toContain("AAAA")
  })

  it("error.type: the tag of a tagged error, _OTHER otherwise", () => {
    expect(GenAi.errorType({ _tag: "RateLimitError" })).toBe("RateLimitError")
    expect(GenAi.errorType(new Error("boom"))).toBe("_OTHER")
  })
})
