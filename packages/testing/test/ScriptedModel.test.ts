import { describe, expect, it } from "@effect/vitest"
import * as Chat from "@switchboard/core/Chat"
import * as Embeddings from "@switchboard/core/Embeddings"
import * as Images from "@switchboard/core/Images"
import * as Models from "@switchboard/core/Models"
import * as Moderations from "@switchboard/core/Moderations"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Videos from "@switchboard/core/Videos"
import { recordingSpans } from "@switchboard/emulator/RecordingTracer"
import * as Effect from "effect/Effect"
import * as Switchboard from "@switchboard/core/Switchboard"
import * as Stream from "effect/Stream"
import { Reply, ScriptedModel, TestTime } from "@switchboard/testing"

const model = "gpt-4o-mini"
const ask = (content: string, extra: Partial<Protocol.ChatRequest> = {}): Protocol.ChatRequest => ({
  model,
  messages: [{ role: "user", content }],
  ...extra
})
const weather: Protocol.Tool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  }
}

/** The same step, given to a call that streams and to one that does not. */
const bothWays = (step: Reply.Step, request: Protocol.ChatRequest) =>
  Effect.gen(function*() {
    const created = yield* Effect.provide(Chat.create(request), ScriptedModel.layer([step]))
    const { calls, streamed } = yield* Effect.gen(function*() {
      const streamed = yield* Chat.accumulate(Chat.stream(request, { includeUsage: true }))
      return { streamed, calls: yield* ScriptedModel.calls }
    }).pipe(Effect.provide(ScriptedModel.layer([step])))
    return { created, streamed, calls }
  })

describe("ScriptedModel: replies", () => {
  it.effect("a text step answers create and stream alike", () =>
    Effect.gen(function*() {
      const step = Reply.text("Hello there, how are you?", { usage: { prompt_tokens: 3, completion_tokens: 6 } })
      const { calls, created, streamed } = yield* bothWays(step, ask("Hi"))
      expect(created.choices[0]?.message.content).toBe("Hello there, how are you?")
      expect(created.usage).toEqual({ prompt_tokens: 3, completion_tokens: 6, total_tokens: 9 })
      expect(created.choices[0]?.finish_reason).toBe("stop")
      expect(streamed).toEqual(created)
      expect(calls.map((c) => [c.index, c.streamed, c.step])).toEqual([[0, true, 0]])
      expect(calls[0]?.chat?.messages).toEqual([{ role: "user", content: "Hi" }])
    }))

  it.effect("a stream comes in word-sized chunks", () =>
    Effect.gen(function*() {
      const texts = yield* Stream.runCollect(Chat.streamText(ask("Hi")))
      expect(texts).toEqual(["one ", "two ", "three"])
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.text("one two three")]))))

  it.effect("tool calls carry their arguments as JSON, ids given or made, both ways alike", () =>
    Effect.gen(function*() {
      const step = Reply.toolCalls([
        { name: "get_weather", arguments: { city: "Paris" }, id: "call_a" },
        { name: "get_weather", arguments: { city: "A much longer city name, to be streamed in pieces" } }
      ])
      const { created, streamed } = yield* bothWays(step, ask("Weather?", { tools: [weather] }))
      const calls = created.choices[0]?.message.tool_calls ?? []
      expect(calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
        ["call_a", "get_weather", { city: "Paris" }],
        ["call_0_1", "get_weather", { city: "A much longer city name, to be streamed in pieces" }]
      ])
      expect(created.choices[0]?.finish_reason).toBe("tool_calls")
      expect(created.choices[0]?.message.content).toBeNull()
      expect(streamed).toEqual(created)
    }))

  it.effect("a refusal", () =>
    Effect.gen(function*() {
      const { created, streamed } = yield* bothWays(Reply.refusal("I cannot help with that."), ask("Bad"))
      expect(created.choices[0]?.message.refusal).toBe("I cannot help with that.")
      expect(streamed).toEqual(created)
    }))

  it.effect("a function step computes the reply from the request", () =>
    Effect.gen(function*() {
      const reply = yield* Chat.create(ask("echo me"))
      expect(reply.choices[0]?.message.content).toBe("You said: echo me")
    }).pipe(Effect.provide(ScriptedModel.layer([
      Reply.respond((call) => Reply.text(`You said: ${String(call.chat?.messages[0]?.content)}`))
    ]))))

  it.effect("embeddings, images, moderation, models", () =>
    Effect.gen(function*() {
      const given = yield* Embeddings.embedMany(["a", "b"], { model: "text-embedding-3-small" })
      expect(given).toEqual([[1, 0], [0, 1]])
      const made = yield* Embeddings.embedMany(["a", "b", "a"], { model: "text-embedding-3-small" })
      expect(made[0]).toHaveLength(8)
      expect(made[0]).toEqual(made[2])
      expect(made[0]).not.toEqual(made[1])
      const images = yield* Images.generate({ prompt: "a fox" })
      expect(images.map((i) => i.url)).toEqual(["https://img.example/fox.png"])
      const verdict = yield* Moderations.check("hello")
      expect(verdict.flagged).toBe(true)
      const models = yield* Models.list
      expect(models.map((m) => m.id)).toEqual(["gpt-4o-mini", "image2"])
      yield* ScriptedModel.assertComplete
    }).pipe(Effect.provide(ScriptedModel.layer([
      Reply.embeddings([[1, 0], [0, 1]]),
      Reply.embeddings(8),
      Reply.image("https://img.example/fox.png"),
      Reply.moderation({ flagged: true, scores: { violence: 0.9 } }),
      Reply.models(["gpt-4o-mini", "image2"])
    ]))))

  it.effect("a video task follows its statuses; its polls sleep on the test clock", () =>
    TestTime.run(Effect.gen(function*() {
      const done = yield* Videos.generate({ model: "video-1", prompt: "a paper boat" })
      expect(done.videoUrl).toBe("https://video.invalid/task_7.mp4")
      const calls = yield* ScriptedModel.calls
      expect(calls.map((c) => c.path)).toEqual(["/chat/completions", ...Array(3).fill("/chat/task/status")])
      expect(calls.every((c) => c.step === 0)).toBe(true)
      yield* ScriptedModel.assertComplete
    })).pipe(Effect.provide(ScriptedModel.layer([
      Reply.video({ taskId: "task_7", statuses: ["queued", { status: "running", progress: 40 }, "succeed"] })
    ]))))
})

describe("ScriptedModel: the SDK above the wire runs", () => {
  it.effect("each call has its span, with the reply's usage; the traceparent and per-call headers are sent", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* recordingSpans(
        Chat.create(ask("Hi")).pipe(Switchboard.withRequestOptions({ headers: { "x-tenant": "acme" } }))
      )
      expect(result._tag).toBe("Success")
      const span = spans.find((s) => s.name === "chat gpt-4o-mini")
      expect(span?.attributes.get("gen_ai.usage.input_tokens")).toBe(3)
      const [call] = yield* ScriptedModel.calls
      expect(call?.headers["traceparent"]).toContain(span?.traceId)
      expect(call?.headers["x-tenant"]).toBe("acme")
      expect(Object.keys(call?.headers ?? {}).map((h) => h.toLowerCase())).not.toContain("authorization")
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.text("Hello", { usage: { prompt_tokens: 3, completion_tokens: 1 } })]))))

  it.effect("a request the SDK refuses is never sent: the script is not touched", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Chat.create({ ...ask("Hi"), max_tokens: 0.5 }))
      expect(error._tag).toBe("InvalidRequestError")
      expect(yield* ScriptedModel.calls).toEqual([])
      expect(yield* ScriptedModel.remaining).toBe(1)
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.text("unused")]))))
})

describe("ScriptedModel: faults and time", () => {
  it.effect("a 503 with retry-after is retried after the wait it asked, on the test clock", () =>
    TestTime.run(Effect.gen(function*() {
      const reply = yield* Chat.create(ask("Hi"))
      expect(reply.choices[0]?.message.content).toBe("at last")
      expect(yield* TestTime.slept).toEqual([2000])
      expect((yield* ScriptedModel.calls).length).toBe(2)
    })).pipe(Effect.provide(ScriptedModel.layer([
      Reply.error(503, { headers: { "Retry-After": "2" } }),
      Reply.text("at last")
    ]))))

  it.effect("backoffs of every retry run without hanging", () =>
    TestTime.run(Effect.gen(function*() {
      const error = yield* Effect.flip(Chat.create(ask("Hi")))
      expect(error._tag).toBe("ServerError")
      expect((yield* TestTime.slept).length).toBe(2)
    })).pipe(Effect.provide(ScriptedModel.layer([Reply.error(500), Reply.error(500), Reply.error(500)]))))

  it.effect("an error reply is the SDK's typed error, with the status and message", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Chat.create(ask("Hi")))
      expect(error._tag).toBe("BadRequestError")
      expect(error.message).toContain("no such thing")
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.error(400, { message: "no such thing" })]))))

  it.effect("a stream cut after two chunks fails as a cut stream, after what arrived", () =>
    Effect.gen(function*() {
      const got: Array<string> = []
      const error = yield* Effect.flip(Stream.runForEach(Chat.streamText(ask("Hi")), (t) => Effect.sync(() => got.push(t))))
      expect(error._tag).toBe("StreamError")
      expect(got).toEqual(["one "])
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.cut(Reply.text("one two three"), 2)]))))

  it.effect("delays and chunk delays are on the clock: a TestClock run takes no real time", () =>
    TestTime.run(Effect.gen(function*() {
      const text = yield* Stream.mkString(Chat.streamText(ask("Hi")))
      expect(text).toBe("slow and steady")
      expect(yield* TestTime.slept).toEqual([5000, 1000, 1000, 1000, 1000, 1000])
    })).pipe(Effect.provide(ScriptedModel.layer([
      Reply.text("slow and steady", { delay: "5 seconds", chunkDelay: "1 second" })
    ]))))
})

describe("ScriptedModel: drift", () => {
  it.effect("assertComplete says how many steps were left", () =>
    Effect.gen(function*() {
      yield* Chat.create(ask("Hi"))
      const error = yield* Effect.flip(ScriptedModel.assertComplete)
      expect(error._tag).toBe("UnconsumedStepsError")
      expect(error).toMatchObject({ remaining: 2, steps: 3 })
      expect(error.message).toBe("2 of 3 scripted steps were never used (the first unused is step 1)")
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.text("a"), Reply.text("b"), Reply.text("c")]))))

  it.effect("a call past the end fails, typed, naming the call and its request", () =>
    Effect.gen(function*() {
      yield* Chat.create(ask("first"))
      const surfaced = yield* Effect.flip(Chat.create(ask("second")))
      expect(surfaced._tag).toBe("ResponseDecodeError")
      expect(surfaced.message).toContain("call 1 is past the end of the script (1 step)")
      const error = yield* Effect.flip(ScriptedModel.check(Chat.create(ask("third"))))
      expect(error._tag).toBe("UnexpectedCallError")
      expect(error).toMatchObject({ index: 1, path: "/chat/completions", steps: 1 })
      expect(error.message).toContain(`"content":"second"`)
      expect((yield* ScriptedModel.calls).length).toBe(3)
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.text("only")]))))

  it.effect("a tool call to a tool the request does not offer fails, naming step and call", () =>
    Effect.gen(function*() {
      yield* Chat.create(ask("Hi"))
      const error = yield* Effect.flip(ScriptedModel.check(Chat.create(ask("Weather?", { tools: [weather] }))))
      expect(error._tag).toBe("StepMismatchError")
      expect(error.message).toMatch(/^step 1 cannot answer call 1: the step calls tool "get_time", which the request does not offer \(it offers get_weather\)/)
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.text("hello"), Reply.toolCall("get_time", { zone: "UTC" })]))))

  it.effect("an image step answering embeddings fails, naming step and call", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ScriptedModel.check(Embeddings.embedMany(["a"], { model: "text-embedding-3-small" })))
      expect(error).toMatchObject({ _tag: "StepMismatchError", step: 0, index: 0, path: "/embeddings" })
      expect(error.message).toContain("an image step cannot answer an embeddings call")
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.image("https://img.example/x.png")]))))

  it.effect("the base URL is never reached: nothing listens on it", () =>
    Effect.gen(function*() {
      const reply = yield* Chat.create(ask("Hi"))
      expect(reply.choices[0]?.message.content).toBe("offline")
    }).pipe(Effect.provide(ScriptedModel.layer([Reply.text("offline")], { baseUrl: "http://127.0.0.1:1" }))))
})
