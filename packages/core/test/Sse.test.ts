import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ChatStream from "../src/internal/chatStream.js"
import * as Protocol from "../src/Protocol.js"
import * as Sse from "../src/Sse.js"
import * as Gen from "./generators.js"
import { mutate, viaJson } from "./jsonMutation.js"

const utf8 = new TextEncoder()

/** `bytes` cut at `cuts` into separate reads. */
const split = (bytes: Uint8Array, cuts: ReadonlyArray<number>): ReadonlyArray<Uint8Array> =>
  [0, ...cuts, bytes.length].slice(1).map((end, i, ends) => bytes.subarray(i === 0 ? 0 : ends[i - 1]!, end))

/** Every way the body may arrive: whole, byte by byte, and cut in two at each position. */
const deliveries = (body: string): ReadonlyArray<ReadonlyArray<Uint8Array>> => {
  const bytes = utf8.encode(body)
  const all: Array<ReadonlyArray<Uint8Array>> = [[bytes], split(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1))]
  for (let cut = 1; cut < bytes.length; cut++) all.push(split(bytes, [cut]))
  return all
}

const readsOf = (reads: ReadonlyArray<Uint8Array>) => Stream.fromIterable(reads).pipe(Stream.rechunk(1))

const decodeEvents = (reads: ReadonlyArray<Uint8Array>, options?: Sse.DecodeOptions) =>
  Effect.runSync(Effect.result(Stream.runCollect(Sse.decode(readsOf(reads), options))))

const decodeChunks = (reads: ReadonlyArray<Uint8Array>) =>
  Effect.runSync(
    Effect.result(
      readsOf(reads).pipe(Sse.decode(), Stream.pipeThroughChannel(ChatStream.chunks({ requestId: undefined, redact: (text) => text })), Stream.runCollect)
    )
  )

const message = (data: string, extra: Partial<Sse.Event> = {}) => ({ data, ...extra })

describe("Sse.decode survives every quirk, however the bytes are split", () => {
  const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<Sse.Event>]> = [
    ["\\n line ends", "data: a\n\ndata: b\n\n", [message("a"), message("b")]],
    ["\\r\\n line ends", "data: a\r\n\r\ndata: b\r\n\r\n", [message("a"), message("b")]],
    ["\\r line ends", "data: a\r\rdata: b\r\r", [message("a"), message("b")]],
    ["mixed line ends", "data: a\r\ndata: b\n\r\ndata: c\r\r", [message("a\nb"), message("c")]],
    ["comment lines", ": keep-alive\n\ndata: a\n: in the middle\ndata: b\n\n:\n\n", [message("a\nb")]],
    [
      "other event types are passed on with their type",
      "event: ping\ndata: {}\n\ndata: a\n\nevent: message\ndata: b\n\n",
      [message("{}", { event: "ping" }), message("a"), message("b", { event: "message" })]
    ],
    ["a final event without its blank line", "data: a\n\ndata: b\n", [message("a"), message("b")]],
    ["a final event ended by \\r alone", "data: a\r\rdata: b\r", [message("a"), message("b")]],
    ["an unterminated last line is passed on, marked", "data: a\n\ndata: b", [message("a"), message("b", { unterminated: true })]],
    ["multi-byte characters", "data: héllo 👋 世界\n\n", [message("héllo 👋 世界")]],
    ["a byte order mark", "\uFEFFdata: a\n\n", [message("a")]],
    ["no space after the colon", "data:a\n\ndata:  b\n\n", [message("a"), message(" b")]],
    ["id, retry and unknown fields", "id: 7\nretry: 100\nfoo: bar\ndata: a\n\n", [message("a", { id: "7" })]],
    ["empty events are not dispatched", "\n\nevent: x\n\ndata: a\n\n", [message("a")]]
  ]

  for (const [name, body, expected] of cases) {
    it(name, () => {
      for (const reads of deliveries(body)) {
        expect(decodeEvents(reads)).toEqual(Result.succeed(expected))
      }
    })
  }

  it("an event larger than maxEventSize fails instead of growing", () => {
    const result = decodeEvents([utf8.encode(`data: ${"x".repeat(100)}`)], { maxEventSize: 50 })
    expect(result).toEqual(Result.fail(expect.objectContaining({ _tag: "ResponseTooLargeError", limit: 50, message: expect.stringContaining("50") })))
  })
})

const chunk = (
  content: string | undefined,
  options: { readonly finish?: string; readonly toolCalls?: ReadonlyArray<Protocol.ToolCallDelta> } = {}
): Protocol.ChatCompletionChunk => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1700000000,
  model: "gpt-4o-mini",
  choices: [{
    index: 0,
    delta: {
      ...(content === undefined ? {} : { content }),
      ...(options.toolCalls ? { tool_calls: options.toolCalls } : {})
    },
    finish_reason: options.finish ?? null
  }]
})

const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`

describe("events → chunks", () => {
  const hello = [chunk("Hé"), chunk("llo 👋"), chunk(undefined, { finish: "stop" })]

  it("a stream with every quirk at once decodes to the same chunks at any split", () => {
    const body = [
      ": keep-alive\r\n\r\n",
      sse(hello[0]).replace(/\n/g, "\r\n"),
      "event: ping\ndata: {\"type\":\"ping\"}\n\n",
      sse(hello[1]),
      ": keep-alive\n\n",
      sse(hello[2]).replace(/\n/g, "\r"),
      "data: [DONE]\n"
    ].join("")
    for (const reads of deliveries(body)) {
      expect(decodeChunks(reads)).toEqual(Result.succeed(hello))
    }
  })

  it("keeps fields the protocol does not know", () => {
    const withExtra = { ...hello[0], system_fingerprint: "fp" }
    expect(decodeChunks([utf8.encode(sse(withExtra) + sse(hello[2]))])).toEqual(Result.succeed([withExtra, hello[2]]))
  })

  const failures: ReadonlyArray<readonly [string, string, Record<string, unknown>]> = [
    [
      "an error event mid-stream → StreamError with the service's message",
      sse(hello[0]) + sse({ error: { message: "The model is overloaded", type: "server_error", code: "overloaded" } }),
      { _tag: "StreamError", message: "The model is overloaded", code: "overloaded" }
    ],
    [
      "an `event: error` → StreamError",
      sse(hello[0]) + `event: error\ndata: {"message":"boom"}\n\n`,
      { _tag: "StreamError", message: "boom" }
    ],
    [
      "the end without [DONE] and without finish_reason → StreamError, not a short answer",
      sse(hello[0]) + sse(hello[1]),
      { _tag: "StreamError", message: expect.stringContaining("ended before the completion did") }
    ],
    [
      "an empty body → StreamError",
      "",
      { _tag: "StreamError" }
    ],
    [
      "undecodable JSON → ResponseDecodeError naming the text",
      sse(hello[0]) + `data: {"id": "chatcmpl-1", "choices": [\n\n`,
      { _tag: "ResponseDecodeError", message: expect.stringContaining(`{"id": "chatcmpl-1", "choices": [`) }
    ],
    [
      "a chunk that is not one → ResponseDecodeError",
      sse({ id: 5, choices: [] }),
      { _tag: "ResponseDecodeError", message: expect.stringContaining("id"), body: `{"id":5,"choices":[]}` }
    ]
  ]

  for (const [name, body, error] of failures) {
    it(name, () => {
      const result = decodeChunks([utf8.encode(body)])
      expect(Result.isFailure(result) && result.failure).toMatchObject(error)
    })
  }

  it("a long undecodable event is truncated in the error", () => {
    const result = decodeChunks([utf8.encode(`data: {${"x".repeat(10_000)}\n\n`)])
    const error = Result.isFailure(result) ? result.failure : undefined
    expect(error?._tag).toBe("ResponseDecodeError")
    expect(error!.message.length).toBeLessThan(400)
  })

  it("a stream that closes without [DONE] after a finish_reason is accepted", () => {
    expect(decodeChunks([utf8.encode(hello.map(sse).join(""))])).toEqual(Result.succeed(hello))
  })

  it("[DONE] ends the stream: nothing after it is read", () => {
    const body = hello.map(sse).join("") + "data: [DONE]\n\n" + "data: not json\n\n"
    expect(decodeChunks([utf8.encode(body)])).toEqual(Result.succeed(hello))
  })

  it("[DONE] without a finish_reason is a complete stream", () => {
    expect(decodeChunks([utf8.encode(sse(hello[0]) + "data: [DONE]\n\n")])).toEqual(Result.succeed([hello[0]]))
  })

  it("[DONE] tells the wire the body is done; a stream ended otherwise does not", () => {
    const doneCalls = (body: string) => {
      let calls = 0
      const context = { requestId: undefined, redact: (text: string) => text, done: () => void calls++ }
      Effect.runSync(Effect.result(Stream.runDrain(
        readsOf([utf8.encode(body)]).pipe(Sse.decode(), Stream.pipeThroughChannel(ChatStream.chunks(context)))
      )))
      return calls
    }
    expect(doneCalls(hello.map(sse).join("") + "data: [DONE]\n\n")).toBe(1)
    expect(doneCalls(hello.map(sse).join(""))).toBe(0)
    expect(doneCalls(sse(hello[0]) + "data: {\n\n" + "data: [DONE]\n\n")).toBe(0)
  })
})

/** The chunks a decoder delivered before it ended, and how it ended, as a consumer sees them. */
const delivered = <A, E>(stream: Stream.Stream<A, E>) => {
  const seen: Array<A> = []
  const result = Effect.runSync(Effect.result(Stream.runForEach(stream, (a) => Effect.sync(() => seen.push(a)))))
  return { seen, result }
}

describe("a failure inside a read: what came before it is delivered first, at any split", () => {
  const hello = [chunk("Hé"), chunk("llo 👋"), chunk(undefined, { finish: "stop" })]

  it("a bad chunk between good ones: the chunks before it, then its ResponseDecodeError", () => {
    const body = sse(hello[0]) + sse(hello[1]) + sse({ id: 5, choices: [] }) + sse(hello[2]) + "data: [DONE]\n\n"
    for (const reads of deliveries(body)) {
      const { result, seen } = delivered(
        readsOf(reads).pipe(Sse.decode(), Stream.pipeThroughChannel(ChatStream.chunks({ requestId: undefined, redact: (text) => text })))
      )
      expect(seen).toEqual(hello.slice(0, 2))
      expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "ResponseDecodeError", body: `{"id":5,"choices":[]}` })
    }
  })

  // The limit bounds what is held for an event not yet complete: here one of
  // three 30-character lines that the body never ends.
  it("an event growing past maxEventSize after complete ones: those events, then ResponseTooLargeError", () => {
    const body = "data: a\n\ndata: b\n\n: note\n\n" + `data: ${"x".repeat(30)}\n`.repeat(3)
    for (const reads of deliveries(body)) {
      const { result, seen } = delivered(Sse.decode(readsOf(reads), { maxEventSize: 50 }))
      expect(seen).toEqual([message("a"), message("b")])
      expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "ResponseTooLargeError", limit: 50 })
    }
  })
})

describe("the fast chunk check agrees with the schema", () => {
  const schemaIs = Schema.is(Protocol.ChatCompletionChunk)
  const chunks = Arbitrary.schema(Protocol.ChatCompletionChunk)
  /** Every generated case holds; the first that does not fails the test with its replay. */
  const property = <A>(arbitrary: Arbitrary.Arbitrary<A>, holds: (a: A) => boolean, runs: number) => {
    const failure = Arbitrary.formatCheckFailure(Effect.runSync(Arbitrary.checkEffect(arbitrary, holds, { runs, seed: 777 })))
    if (failure !== undefined) throw new Error(failure)
  }

  it("accepts every chunk the schema generates (as JSON, which has no Infinity)", () => {
    property(chunks, (c) => {
      const candidate = viaJson(c)
      return !schemaIs(candidate) || ChatStream.isPlainChunk(candidate)
    }, 2000)
  })

  it("never accepts what the schema rejects", () => {
    // Valid chunks, taken apart: any field of any depth replaced by any JSON value.
    property(Arbitrary.all([chunks, Arbitrary.array(Gen.nat, { maxLength: 6 }), Gen.json]), ([c, path, replacement]) => {
      const candidate = mutate(viaJson(c), path, replacement)
      return !ChatStream.isPlainChunk(candidate) || schemaIs(candidate)
    }, 5000)
  })
})

describe("Chat.accumulate", () => {
  const accumulate = (chunks: ReadonlyArray<Protocol.ChatCompletionChunk>) =>
    Effect.runSync(Effect.result(ChatStream.accumulate(Stream.fromIterable(chunks), 1_000_000)))

  const weather = { id: "call_1", type: "function", function: { name: "get_weather", arguments: `{"city":"Paris"}` } }
  const time = { id: "call_2", type: "function", function: { name: "get_time", arguments: `{"city":"Paris"}` } }
  const toolCallsOf = (result: ReturnType<typeof accumulate>) =>
    Result.getOrThrow(result).choices[0]?.message.tool_calls

  it("concatenates content and keeps id, model, created, finish_reason and usage", () => {
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }
    const completion = Result.getOrThrow(accumulate([
      chunk("Hel"),
      chunk("lo"),
      chunk(undefined, { finish: "stop" }),
      { id: "chatcmpl-1", choices: [], usage }
    ]))
    expect(completion).toEqual({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1700000000,
      model: "gpt-4o-mini",
      choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
      usage
    })
  })

  it("merges interleaved deltas of parallel calls by index", () => {
    const result = accumulate([
      chunk(undefined, { toolCalls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
      chunk(undefined, { toolCalls: [{ index: 1, id: "call_2", type: "function", function: { name: "get_time", arguments: "" } }] }),
      chunk(undefined, { toolCalls: [{ index: 0, function: { arguments: `{"city":` } }] }),
      chunk(undefined, { toolCalls: [{ index: 1, function: { arguments: `{"city":"Paris"}` } }] }),
      chunk(undefined, { toolCalls: [{ index: 0, function: { arguments: `"Paris"}` } }] }),
      chunk(undefined, { finish: "tool_calls" })
    ])
    expect(toolCallsOf(result)).toEqual([weather, time])
    expect(Result.getOrThrow(result).choices[0]?.message.content).toBeNull()
    expect(Result.getOrThrow(result).choices[0]?.finish_reason).toBe("tool_calls")
  })

  it("without index: by id, when every delta carries it", () => {
    const result = accumulate([
      chunk(undefined, { toolCalls: [{ id: "call_1", function: { name: "get_weather", arguments: `{"city":` } }] }),
      chunk(undefined, { toolCalls: [{ id: "call_2", function: { name: "get_time", arguments: `{"city":"Paris"}` } }] }),
      chunk(undefined, { toolCalls: [{ id: "call_1", function: { name: "get_weather", arguments: `"Paris"}` } }] }),
      chunk(undefined, { finish: "tool_calls" })
    ])
    expect(toolCallsOf(result)).toEqual([weather, time])
  })

  it("without index or id: by position, after the delta that named the call", () => {
    const result = accumulate([
      chunk(undefined, { toolCalls: [{ id: "call_1", function: { name: "get_weather" } }, { id: "call_2", function: { name: "get_time" } }] }),
      chunk(undefined, { toolCalls: [{ function: { arguments: `{"city":` } }, { function: { arguments: `{"city":"Paris"}` } }] }),
      chunk(undefined, { toolCalls: [{ function: { arguments: `"Paris"}` } }] }),
      chunk(undefined, { finish: "tool_calls" })
    ])
    expect(toolCallsOf(result)).toEqual([weather, time])
  })

  it("without index, one call after another: fragments join the latest call", () => {
    const result = accumulate([
      chunk(undefined, { toolCalls: [{ id: "call_1", function: { name: "get_weather", arguments: "" } }] }),
      chunk(undefined, { toolCalls: [{ function: { arguments: `{"city":"Paris"}` } }] }),
      chunk(undefined, { toolCalls: [{ id: "call_2", function: { name: "get_time", arguments: `{"city":` } }] }),
      chunk(undefined, { toolCalls: [{ function: { arguments: `"Paris"}` } }] }),
      chunk(undefined, { finish: "tool_calls" })
    ])
    expect(toolCallsOf(result)).toEqual([weather, time])
  })

  it("a call streamed without an id fails rather than inventing one", () => {
    const result = accumulate([
      chunk(undefined, { toolCalls: [{ index: 0, function: { name: "get_weather", arguments: "{}" } }], finish: "tool_calls" })
    ])
    expect(Result.isFailure(result) && result.failure).toMatchObject({
      _tag: "ResponseDecodeError",
      message: expect.stringContaining("tool_calls[0] was streamed without an id")
    })
  })

  it("an empty stream fails", () => {
    const result = accumulate([])
    expect(Result.isFailure(result) && result.failure).toMatchObject({
      _tag: "StreamError"
    })
  })

  it("keeps choices apart by index", () => {
    const second = (content: string): Protocol.ChatCompletionChunk => ({
      id: "chatcmpl-1",
      choices: [{ index: 1, delta: { content }, finish_reason: "stop" }]
    })
    const completion = Result.getOrThrow(accumulate([second("B"), chunk("A", { finish: "stop" })]))
    expect(completion.choices.map((c) => c.message.content)).toEqual(["A", "B"])
  })
})
