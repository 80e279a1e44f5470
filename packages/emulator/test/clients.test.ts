/**
 * Other clients against the emulator, over real HTTP (issue 27): the
 * official `openai` client, and Vercel's `ai` with `@ai-sdk/openai-compatible`.
 * What they send and what they make of the replies is what users meet.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { cosineSimilarity, embedMany, generateObject, generateText, jsonSchema, type JSONSchema7, stepCountIs, streamText, tool } from "ai"
import * as ManagedRuntime from "effect/ManagedRuntime"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Emulator from "../src/Emulator.js"

const runtime = ManagedRuntime.make(Emulator.layer())
let emulator: Emulator.Emulator["Service"]
let openai: OpenAI
let provider: ReturnType<typeof createOpenAICompatible>

beforeAll(async () => {
  emulator = await runtime.runPromise(Emulator.Emulator)
  openai = new OpenAI({ baseURL: `${emulator.url}/v1`, apiKey: emulator.apiKey, maxRetries: 0 })
  provider = createOpenAICompatible({
    name: "switchboard",
    baseURL: `${emulator.url}/v1`,
    apiKey: emulator.apiKey,
    // Without it generateObject sends json_object with no schema at all (docs/emulator.md).
    supportsStructuredOutputs: true
  })
})

afterAll(() => runtime.dispose())

const user = (content: string) => [{ role: "user" as const, content }]

const Order: JSONSchema7 = {
  type: "object",
  properties: { id: { type: "string" }, total: { type: "number", minimum: 100 }, tags: { type: "array", items: { type: "string" } } },
  required: ["id", "total", "tags"],
  additionalProperties: false
}

const weatherParameters: JSONSchema7 = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false
}

describe("openai", () => {
  it("max_completion_tokens cuts the reply, and n gives that many choices", async () => {
    const cut = await openai.chat.completions.create({ model: "gpt-4o-mini", messages: user("Hello there"), max_completion_tokens: 3 })
    expect(cut.choices[0]?.message.content).toBe(`You said: "Hello`)
    expect(cut.choices[0]?.finish_reason).toBe("length")
    const three = await openai.chat.completions.create({ model: "gpt-4o-mini", messages: user("Hello there"), n: 3 })
    expect(three.choices.map((c) => c.index)).toEqual([0, 1, 2])
  })

  it("a streamed n: 2 reply interleaves its choices by index", async () => {
    const stream = await openai.chat.completions.create({ model: "gpt-4o-mini", messages: user("Hello there"), n: 2, stream: true })
    const texts = ["", ""]
    const order: Array<number> = []
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        order.push(choice.index)
        texts[choice.index] += choice.delta.content ?? ""
      }
    }
    expect(order.slice(0, 4)).toEqual([0, 1, 0, 1])
    expect(texts[0]).toMatch(/^You said: "Hello there"\./)
    expect(texts[1]).toMatch(/^\(Choice 2 of 2\) You said: "Hello there"\./)
  })

  it("a value out of range is a BadRequestError naming the field", async () => {
    const error = await openai.chat.completions.create({ model: "gpt-4o-mini", messages: user("Hi"), temperature: 5 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect(error).toMatchObject({ status: 400, param: "temperature", code: "invalid_value" })
  })

  it("json_object follows the JSON Schema written in the prompt", async () => {
    const reply = await openai.chat.completions.create({
      model: "gpt-4o-mini",
      response_format: { type: "json_object" },
      messages: [
        { role: "system", content: `Reply with JSON that follows this schema: ${JSON.stringify(Order)}` },
        { role: "user", content: "An order, please" }
      ]
    })
    const order = JSON.parse(reply.choices[0]!.message.content!) as { total: number; tags: Array<string> }
    expect(order.total).toBeGreaterThanOrEqual(100)
    expect(order.tags).toHaveLength(1)
  })

  it("embeddings (base64 by default) rank by meaning", async () => {
    const texts = ["a kitten asleep on the couch", "The goldfish sleeps on a red ball.", "The cat is napping on the sofa."]
    const { data } = await openai.embeddings.create({ model: "text-embedding-3-small", input: texts })
    const [query, fish, cat] = data.map((d) => d.embedding)
    expect(cosineSimilarity(query!, cat!)).toBeGreaterThan(cosineSimilarity(query!, fish!))
  })

  it("a wrong key is an AuthenticationError, and the request is not recorded", async () => {
    const before = (await runtime.runPromise(emulator.requests)).length
    const wrong = new OpenAI({ baseURL: `${emulator.url}/v1`, apiKey: "sk-wrong", maxRetries: 0 })
    await expect(wrong.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError)
    expect((await runtime.runPromise(emulator.requests)).length).toBe(before)
  })
})

describe("Vercel ai with @ai-sdk/openai-compatible", () => {
  it("generateText", async () => {
    const { text, finishReason } = await generateText({ model: provider("gpt-4o-mini"), prompt: "Hello there", maxOutputTokens: 3 })
    expect(text).toBe(`You said: "Hello`)
    expect(finishReason).toBe("length")
  })

  it("streamText", async () => {
    const result = streamText({ model: provider("gpt-4o-mini"), prompt: "Hello there" })
    let text = ""
    for await (const piece of result.textStream) text += piece
    expect(text).toMatch(/^You said: "Hello there"\. This is a deterministic reply/)
  })

  it("tools over two steps: the call, then the answer quoting its result", async () => {
    const { steps, text } = await generateText({
      model: provider("gpt-4o-mini"),
      prompt: "What is the weather? Use get_weather",
      tools: {
        get_weather: tool({ description: "The weather in a city", inputSchema: jsonSchema(weatherParameters), execute: async () => ({ temp: 21 }) })
      },
      stopWhen: stepCountIs(2)
    })
    expect(steps).toHaveLength(2)
    expect(steps[0]!.toolCalls.map((c) => [c.toolName, c.input])).toEqual([["get_weather", { city: "sample city" }]])
    expect(text).toBe(`Tool results: get_weather → {"temp":21}.`)
  })

  it("generateObject with structured outputs", async () => {
    const { object } = await generateObject({
      model: provider("gpt-4o-mini"),
      schema: jsonSchema<{ id: string; total: number; tags: Array<string> }>(Order),
      prompt: "An order, please"
    })
    expect(object).toEqual({ id: "sample id", total: 100, tags: ["sample tags"] })
  })

  it("embedMany ranks by meaning", async () => {
    const { embeddings } = await embedMany({
      model: provider.embeddingModel("text-embedding-3-small"),
      values: ["a kitten asleep on the couch", "The goldfish sleeps on a red ball.", "The cat is napping on the sofa."]
    })
    const [query, fish, cat] = embeddings
    expect(cosineSimilarity(query!, cat!)).toBeGreaterThan(cosineSimilarity(query!, fish!))
  })
})
