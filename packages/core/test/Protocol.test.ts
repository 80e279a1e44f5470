import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { decoder, encoder } from "../src/internal/validate.js"
import * as Protocol from "../src/Protocol.js"

describe("Protocol", () => {
  const encodeChat = encoder(Protocol.ChatRequest)

  it("keeps the wire's field names and passes unknown fields through", () => {
    const request = {
      model: "m",
      max_tokens: 10,
      tool_choice: "auto",
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }],
      vendor_extension: { a: 1 }
    }
    expect(encodeChat(request)).toEqual(Result.succeed(request))
  })

  it("max_completion_tokens is typed and checked like max_tokens", () => {
    const request: Protocol.ChatRequest = { model: "m", messages: [{ role: "user", content: "x" }], max_completion_tokens: 5 }
    expect(encodeChat(request)).toEqual(Result.succeed(request))
    for (const wrong of [0, -1, 2.5, Number.NaN]) {
      const result = encodeChat({ ...request, max_completion_tokens: wrong })
      expect(Result.isFailure(result) && result.failure.field).toBe("max_completion_tokens")
    }
  })

  it("decodes responses tolerantly, keeping fields it does not know", () => {
    const decode = decoder(Protocol.ChatCompletion)
    const body = {
      id: "c1",
      choices: [{ index: 0, message: { role: "assistant", content: "hi", reasoning_content: "..." }, finish_reason: "stop" }],
      extra: true
    }
    const decoded = Result.getOrThrow(decode(body))
    expect(decoded.choices[0]?.message.content).toBe("hi")
    expect((decoded.choices[0]?.message as Record<string, unknown>)["reasoning_content"]).toBe("...")
  })

  it("a tool message must answer a call of an earlier assistant message", () => {
    const result = encodeChat({
      model: "m",
      messages: [{ role: "user", content: "x" }, { role: "tool", content: "r", tool_call_id: "nope" }]
    })
    expect(Result.isFailure(result) && result.failure.field).toBe("messages[1].tool_call_id")
  })

  it("accepts a model list as an object or as a bare array", () => {
    const decode = decoder(Protocol.ModelList)
    const model = { id: "m", object: "model" }
    expect(Result.getOrThrow(decode({ object: "list", data: [model] })).data).toEqual([model])
    expect(Result.getOrThrow(decode([model])).data).toEqual([model])
  })

  it("parses data URIs", () => {
    expect(Protocol.parseDataUri("data:image/PNG;base64,AAAA")).toEqual({ mediaType: "image/png", base64: "AAAA" })
    expect(Protocol.parseDataUri("data:text/plain,hello")).toBeUndefined()
  })
})
