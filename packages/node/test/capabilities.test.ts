import { describe, expect, it } from "@effect/vitest"
import { Chat, Embeddings, Models, Moderations, type Protocol, Videos } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { emulated } from "./fixtures.js"

const model = "gpt-4o-mini"
const user = (content: Protocol.Message["content"]): Protocol.Message => ({ role: "user", content }) as Protocol.Message

const weatherTool: Protocol.Tool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather for a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string", description: "City name" } },
      required: ["city"],
      additionalProperties: false
    }
  }
}
const timeTool: Protocol.Tool = {
  type: "function",
  function: {
    name: "get_time",
    description: "Local time in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string", description: "City name" } },
      required: ["city"],
      additionalProperties: false
    }
  }
}

// Once against the emulator's full replies, once against its minimal ones:
// the bare shapes of the contract, which the SDK must read as well (issue 21).
for (const [mode, minimal] of [["full", false], ["minimal", true]] as const) {
describe(`capabilities over HTTP to the emulator (${mode} replies)`, () => {
  const emulated_ = (options: Parameters<typeof emulated>[0] = {}) => emulated(options, { minimal })
  it.effect("lists the models, with every kind the service offers", () =>
    Effect.gen(function*() {
      const models = yield* Models.list
      const ids = models.map((m) => m.id)
      expect(ids).toEqual(expect.arrayContaining(["gpt-4o-mini", "image2", "text-embedding-3-small"]))
    }).pipe(Effect.provide(emulated_())))

  it.effect("chats in text, deterministically", () =>
    Effect.gen(function*() {
      const request = { model, messages: [user("What is Effect?")] }
      const first = yield* Chat.create(request)
      const second = yield* Chat.create(request)
      expect(first.choices[0]?.message.content).toContain("What is Effect?")
      expect(second.choices[0]?.message.content).toEqual(first.choices[0]?.message.content)
      expect(first.choices[0]?.finish_reason).toBe(minimal ? null : "stop")
      if (minimal) expect(first.usage).toBeUndefined()
      else expect(first.usage?.total_tokens).toBeGreaterThan(0)
    }).pipe(Effect.provide(emulated_())))

  it.effect("sends image parts (URL and data URI) that arrive intact", () =>
    Effect.gen(function*() {
      const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64")
      const completion = yield* Chat.create({
        model,
        messages: [user([
          { type: "text", text: "Describe these" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
          { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } }
        ])]
      })
      const content = completion.choices[0]?.message.content ?? ""
      expect(content).toContain("2 images")
      expect(content).toContain("image/png 16 bytes")
      expect(content).toContain("https://example.com/cat.jpg")
    }).pipe(Effect.provide(emulated_())))

  it.effect("a round trip of two parallel tool calls", () =>
    Effect.gen(function*() {
      const tools = [weatherTool, timeTool]
      const question = user("Use get_weather and get_time for Paris")
      const first = yield* Chat.create({ model, messages: [question], tools })
      const reply = first.choices[0]!.message
      expect(first.choices[0]?.finish_reason).toBe(minimal ? null : "tool_calls")
      expect(reply.tool_calls?.map((call) => call.function.name)).toEqual(["get_weather", "get_time"])
      const results: Array<Protocol.Message> = (reply.tool_calls ?? []).map((call) => ({
        role: "tool",
        tool_call_id: call.id,
        content: call.function.name === "get_weather" ? `{"temp":21}` : `"12:00"`
      }))
      // The assistant message goes back unchanged, then one tool message per call.
      const second = yield* Chat.create({ model, messages: [question, reply, ...results], tools })
      const answer = second.choices[0]?.message.content ?? ""
      expect(answer).toContain(`{"temp":21}`)
      expect(answer).toContain(`"12:00"`)
    }).pipe(Effect.provide(emulated_())))

  it.effect("tool_choice in all four forms", () =>
    Effect.gen(function*() {
      const tools = [weatherTool, timeTool]
      const messages = [user("Hello there")]
      const names = (choice: Protocol.ToolChoice) =>
        Effect.map(
          Chat.create({ model, messages, tools, tool_choice: choice }),
          (c) => c.choices[0]?.message.tool_calls?.map((call) => call.function.name) ?? []
        )
      expect(yield* names("auto")).toEqual([])
      expect(yield* names("none")).toEqual([])
      expect(yield* names("required")).toEqual(["get_weather"])
      expect(yield* names({ type: "function", function: { name: "get_time" } })).toEqual(["get_time"])
      const withNames = yield* Chat.create({ model, messages: [user("call get_time")], tools, tool_choice: "none" })
      expect(withNames.choices[0]?.message.tool_calls ?? []).toEqual([])
    }).pipe(Effect.provide(emulated_())))

  it.effect("embeds one text; equal texts give equal vectors, similar texts are closer", () =>
    Effect.gen(function*() {
      const response = yield* Embeddings.create({
        model: "text-embedding-3-small",
        input: ["the cat sat on the mat", "the cat sat on the mat", "a cat sat on a mat", "stock market report"]
      })
      const [a, b, c, d] = response.data.map((item) => item.embedding)
      const dot = (x: ReadonlyArray<number>, y: ReadonlyArray<number>) => x.reduce((s, v, i) => s + v * y[i]!, 0)
      expect(a).toEqual(b)
      expect(dot(a!, c!)).toBeGreaterThan(dot(a!, d!))
    }).pipe(Effect.provide(emulated_())))

  it.effect("embedMany of 1,000 inputs in batches of 64 returns 1,000 vectors in input order", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const inputs = Array.from({ length: 1000 }, (_, i) => `input number ${i}`)
      const vectors = yield* Embeddings.embedMany(inputs, {
        model: "text-embedding-3-small",
        batchSize: 64,
        concurrency: 4
      })
      expect(vectors).toHaveLength(1000)
      expect(yield* emulator.requestCount).toBe(Math.ceil(1000 / 64))
      for (const i of [0, 63, 64, 500, 999]) {
        const single = yield* Embeddings.create({ model: "text-embedding-3-small", input: inputs[i]! })
        expect(vectors[i]).toEqual(single.data[0]?.embedding)
      }
    }).pipe(Effect.provide(emulated_())))

  it.effect("embedMany of no inputs returns no vectors, without a request", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      expect(yield* Embeddings.embedMany([], { model: "text-embedding-3-small" })).toEqual([])
      expect(yield* emulator.requestCount).toBe(0)
    }).pipe(Effect.provide(emulated())))

  it.effect("Chat.create with stream: true is refused before sending, pointing at Chat.stream", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const error = yield* Effect.flip(Chat.create({ model, messages: [user("Hi")], stream: true }))
      expect(error).toMatchObject({ _tag: "InvalidRequestError", field: "stream" })
      expect(error.message).toContain("Chat.stream")
      expect(yield* emulator.requestCount).toBe(0)
    }).pipe(Effect.provide(emulated())))

  it.effect("moderates text by the emulator's keyword rules", () =>
    Effect.gen(function*() {
      const flagged = yield* Moderations.check("I will attack and kill them")
      const clean = yield* Moderations.check("What a lovely afternoon for tea")
      expect(flagged.flagged).toBe(true)
      expect(clean.flagged).toBe(false)
      expect(Object.keys(flagged.category_scores).length).toBeGreaterThan(0)
    }).pipe(Effect.provide(emulated_())))

  it.effect("streams text and tool calls; accumulate gives what create gives", () =>
    Effect.gen(function*() {
      const text = { model, messages: [user("Stream this sentence please")] }
      const streamed = yield* Chat.accumulate(Chat.stream(text))
      const whole = yield* Chat.create(text)
      expect(streamed.choices[0]?.message.content).toBe(whole.choices[0]?.message.content)
      expect(streamed.choices[0]?.finish_reason).toBe("stop")
      const tools = { model, messages: [user("Use get_weather and get_time for Paris")], tools: [weatherTool, timeTool] }
      const calls = yield* Chat.accumulate(Chat.stream(tools))
      const direct = yield* Chat.create(tools)
      expect(calls.choices[0]?.message.tool_calls).toEqual(direct.choices[0]?.message.tool_calls)
      const pieces = yield* Stream.runCollect(Chat.streamText(text))
      expect([...pieces].join("")).toBe(whole.choices[0]?.message.content)
    }).pipe(Effect.provide(emulated_())))

  it.effect("submits a video task and polls it to its video", () =>
    Effect.gen(function*() {
      const taskId = yield* Videos.submit({ model: Emulator.videoModel, prompt: "a fox in the snow" })
      const first = yield* Videos.status(taskId)
      expect(first._tag).toBe("InProgress")
      const fiber = yield* Effect.forkChild(Videos.generate({ model: Emulator.videoModel, prompt: "a heron" }))
      for (let i = 0; i < 10; i++) yield* TestClock.adjust("20 seconds")
      const done = yield* Fiber.await(fiber)
      expect(done._tag).toBe("Success")
      if (done._tag === "Success") expect(done.value.videoUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\//)
      const failed = yield* Effect.flip(Effect.gen(function*() {
        const f = yield* Effect.forkChild(Videos.generate({ model: Emulator.videoModel, prompt: "please fail" }))
        for (let i = 0; i < 10; i++) yield* TestClock.adjust("20 seconds")
        return yield* Fiber.join(f)
      }))
      expect(failed._tag).toBe("TaskFailedError")
    }).pipe(Effect.provide(emulated_())))
})
}
