/**
 * `@switchboard/ai` against hostile replies (issue 26, case 5), over real
 * HTTP from a `node:http` server: the same protections as core — bounded
 * memory on a stream, no prototype from a model's JSON, bounded and
 * redacted messages — and statuses as the `AiError` reasons `effect/ai`
 * users match on.
 */
import { describe, expect, it } from "@effect/vitest"
import { NodeSwitchboard } from "@switchboard/node"
import { type Handler, json, serve } from "@switchboard/test-support/Hostile"
import * as RecordingTracer from "@switchboard/test-support/RecordingTracer"
import type * as AiError from "effect/ai/AiError"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as AiTool from "effect/ai/Tool"
import * as AiToolkit from "effect/ai/Toolkit"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Formatter from "effect/Formatter"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import type * as Http from "node:http"
import * as Util from "node:util"
import { SwitchboardEmbeddingModel, SwitchboardLanguageModel } from "../src/index.js"

const MiB = 1024 * 1024
const apiKey = "sk-hostile-0123456789abcdef"

/** Runs `use` with `handler` as the service, the provider over it: no retries, `maxResponseBytes` as given. */
const against = <A, E, R>(
  handler: Handler,
  use: Effect.Effect<A, E, R>,
  maxResponseBytes?: number,
  config?: SwitchboardLanguageModel.ConfigService
) =>
  Effect.scoped(Effect.flatMap(serve(handler), (hostile) =>
    Effect.provide(
      use,
      SwitchboardLanguageModel.layer({ model: "gpt-4o-mini", config }).pipe(
        Layer.provideMerge(NodeSwitchboard.layer({ baseUrl: hostile.url, apiKey, maxRetries: 0, maxResponseBytes })),
        Layer.orDie
      )
    ) as Effect.Effect<A, E, Exclude<R, LanguageModel.LanguageModel>>))

const completionWithCall = (name: string, args: string) => ({
  id: "x",
  choices: [{
    index: 0,
    finish_reason: "tool_calls",
    message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name, arguments: args } }] }
  }]
})

const streamWithCall = (name: string, args: string) => (_request: unknown, response: Http.ServerResponse) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  response.end(
    chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name, arguments: "" } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }) +
      chunk({}, "tool_calls") + "data: [DONE]\n\n"
  )
}

const Configure = AiTool.make("configure", {
  parameters: Schema.Struct({ extra: Schema.Record(Schema.String, Schema.Unknown) }),
  success: Schema.String
})
const kit = AiToolkit.make(Configure)

/** What the handler saw: an inherited `isAdmin`, and whether the record's prototype is Object's. */
const seenBy = (seen: Ref.Ref<unknown>) =>
  kit.toLayer({
    configure: ({ extra }) =>
      Effect.as(Ref.set(seen, { isAdmin: (extra as { isAdmin?: unknown }).isAdmin, plain: Object.getPrototypeOf(extra) === Object.prototype }), "ok")
  })

const polluting = `{"extra":{"__proto__":{"isAdmin":true},"a":1}}`

describe("tool arguments: no prototype from the model's JSON", () => {
  it.live("generateText", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<unknown>(undefined)
      yield* against(
        (_request, response) => json(response, 200, completionWithCall("configure", polluting)),
        LanguageModel.generateText({ prompt: "Configure", toolkit: kit }).pipe(Effect.provide(seenBy(seen)))
      )
      expect(yield* Ref.get(seen)).toEqual({ isAdmin: undefined, plain: true })
    }))

  it.live("streamText", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<unknown>(undefined)
      yield* against(
        streamWithCall("configure", polluting),
        Stream.runDrain(LanguageModel.streamText({ prompt: "Configure", toolkit: kit })).pipe(Effect.provide(seenBy(seen)))
      )
      expect(yield* Ref.get(seen)).toEqual({ isAdmin: undefined, plain: true })
    }))

  it.live("generateObject", () =>
    Effect.gen(function*() {
      const Options = Schema.Struct({ extra: Schema.Record(Schema.String, Schema.Unknown) })
      const result = yield* against(
        (_request, response) => json(response, 200, completionWithCall("respond", polluting)),
        LanguageModel.generateObject({ prompt: "Options", schema: Options })
      )
      expect((result.value.extra as { isAdmin?: unknown }).isAdmin).toBeUndefined()
      expect(Object.getPrototypeOf(result.value.extra)).toBe(Object.prototype)
    }))
})

describe("a finish_reason named like a member of Object.prototype (issue 33, case 1)", () => {
  const reply = (reason: string) => ({
    id: "x",
    choices: [{ index: 0, finish_reason: reason, message: { role: "assistant", content: "hi" } }]
  })
  for (const reason of ["constructor", "toString", "__proto__", "valueOf"]) {
    it.live(`generateText: ${reason} is "other"`, () =>
      Effect.gen(function*() {
        const result = yield* against((_request, response) => json(response, 200, reply(reason)), LanguageModel.generateText({ prompt: "Hi" }))
        expect(result.finishReason).toBe("other")
      }))

    it.live(`streamText: ${reason} is "other"`, () =>
      Effect.gen(function*() {
        const parts = yield* against(
          (_request, response) => {
            response.writeHead(200, { "content-type": "text/event-stream" })
            response.end(
              `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { content: "hi" }, finish_reason: reason }] })}\n\n` +
                "data: [DONE]\n\n"
            )
          },
          Stream.runCollect(LanguageModel.streamText({ prompt: "Hi" }))
        )
        expect(parts.flatMap((p) => (p.type === "finish" ? [p.reason] : []))).toEqual(["other"])
      }))
  }
})

describe("strict tools: the model's nulls", () => {
  const Search = AiTool.make("search", {
    parameters: Schema.Struct({ query: Schema.String, limit: Schema.optionalKey(Schema.Number) }),
    success: Schema.String
  })
  const search = AiToolkit.make(Search)

  it.live("a null for an optional parameter reaches the handler as absent", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<unknown>(undefined)
      yield* against(
        (_request, response) => json(response, 200, completionWithCall("search", `{"query":"q","limit":null}`)),
        LanguageModel.generateText({ prompt: "Search", toolkit: search }).pipe(
          Effect.provide(search.toLayer({ search: (params) => Effect.as(Ref.set(seen, params), "found") }))
        ),
        undefined,
        { strict: true }
      )
      expect(yield* Ref.get(seen)).toEqual({ query: "q" })
    }))

  it.live("streamText too", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<unknown>(undefined)
      yield* against(
        streamWithCall("search", `{"query":"q","limit":null}`),
        Stream.runDrain(LanguageModel.streamText({ prompt: "Search", toolkit: search })).pipe(
          Effect.provide(search.toLayer({ search: (params) => Effect.as(Ref.set(seen, params), "found") }))
        ),
        undefined,
        { strict: true }
      )
      expect(yield* Ref.get(seen)).toEqual({ query: "q" })
    }))

  it.live("a value a strict schema refuses is an InvalidOutputError naming the call", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(against(
        (_request, response) => json(response, 200, completionWithCall("search", `{"query":7,"limit":null}`)),
        LanguageModel.generateText({ prompt: "Search", toolkit: search }).pipe(
          Effect.provide(search.toLayer({ search: () => Effect.succeed("found") }))
        ),
        undefined,
        { strict: true }
      ))
      expect(error.reason).toMatchObject({ _tag: "InvalidOutputError", description: expect.stringContaining("call_1 (search)") })
    }))
})

describe("a model's bad JSON: a bounded message without the key", () => {
  const echo = `{"key":"${apiKey}",${"x".repeat(5 * MiB)}`
  const bounded = (error: { readonly reason: { readonly _tag: string }; readonly message: string; readonly isRetryable: boolean }) => {
    expect(error.reason._tag).toBe("InvalidOutputError")
    expect(error.isRetryable).toBe(true)
    expect(error.message.length).toBeLessThan(2000)
    expect(error.message).not.toContain(apiKey)
  }

  it.live("generateText", () =>
    Effect.map(
      Effect.flip(against(
        (_request, response) => json(response, 200, completionWithCall("configure", echo)),
        LanguageModel.generateText({ prompt: "Configure", toolkit: kit }).pipe(Effect.provide(seenBy(Ref.makeUnsafe<unknown>(undefined))))
      )),
      bounded
    ))

  it.live("streamText", () =>
    Effect.map(
      Effect.flip(against(
        streamWithCall("configure", echo),
        Stream.runDrain(LanguageModel.streamText({ prompt: "Configure", toolkit: kit })).pipe(
          Effect.provide(seenBy(Ref.makeUnsafe<unknown>(undefined)))
        )
      )),
      bounded
    ))

  it.live("generateObject", () =>
    Effect.map(
      Effect.flip(against(
        (_request, response) => json(response, 200, completionWithCall("respond", echo)),
        LanguageModel.generateObject({ prompt: "Options", schema: Schema.Struct({ a: Schema.String }) })
      )),
      bounded
    ))

  it.live("generateObject: JSON nested 10,000 levels deep", () =>
    Effect.map(
      Effect.flip(against(
        (_request, response) =>
          json(response, 200, completionWithCall("respond", `{"a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`)),
        LanguageModel.generateObject({ prompt: "Options", schema: Schema.Struct({ a: Schema.Unknown }) })
      )),
      (error) => expect(error.reason).toMatchObject({ _tag: "InvalidOutputError", description: expect.stringContaining("deeper than") })
    ))
})

describe("a model's bad JSON: the key where the message's preview is cut", () => {
  // The key starts 10 characters before a cut (80 for the call's id, 200 for the arguments): no piece of it stays.
  const across = (cut: number) => `${"x".repeat(cut - 10)}${apiKey} and more`
  it.live("generateText", () =>
    Effect.map(
      Effect.flip(against(
        (_request, response) => {
          const completion = completionWithCall("configure", `{${across(200)}`)
          completion.choices[0]!.message.tool_calls[0]!.id = across(80)
          json(response, 200, completion)
        },
        LanguageModel.generateText({ prompt: "Configure", toolkit: kit }).pipe(Effect.provide(seenBy(Ref.makeUnsafe<unknown>(undefined))))
      )),
      (error) => {
        expect(error.reason._tag).toBe("InvalidOutputError")
        expect(error.message).not.toContain(apiKey.slice(0, 8))
      }
    ))
})

describe("a reply's created time out of Date's range", () => {
  const created = 1e300
  it.live("generateText: the reply is read, its timestamp absent", () =>
    Effect.gen(function*() {
      const result = yield* against(
        (_request, response) =>
          json(response, 200, { id: "x", created, choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "hi" } }] }),
        LanguageModel.generateText({ prompt: "Hi" })
      )
      expect(result.text).toBe("hi")
    }))

  it.live("streamText: the stream is read, its timestamp absent", () =>
    Effect.gen(function*() {
      const parts = yield* against(
        (_request, response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.end(`data: ${JSON.stringify({ id: "x", created, choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`)
        },
        Stream.runCollect(LanguageModel.streamText({ prompt: "Hi" }))
      )
      expect([...parts].flatMap((part) => (part.type === "text-delta" ? [part.delta] : []))).toEqual(["hi"])
    }))
})

describe("a reply's id and model of 1 MiB", () => {
  it.live("effect/ai's span holds their first 1,000 characters", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const long = "m".repeat(MiB)
      yield* against(
        (_request, response) => json(response, 200, { id: long, model: long, choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "hi" } }] }),
        LanguageModel.generateText({ prompt: "Hi" })
      ).pipe(Effect.withTracer(yield* RecordingTracer.make(spans)))
      for (const span of spans) {
        for (const [name, value] of span.attributes) if (name.startsWith("gen_ai.response.")) expect(String(value).length).toBeLessThan(1100)
      }
      expect(spans.some((span) => span.name === "LanguageModel.generateText" && span.attributes.has("gen_ai.response.id"))).toBe(true)
    }))
})

describe("a reply's id, model and x-request-id echoing the key", () => {
  const echo = `x-${apiKey}`
  const handler: Handler = (_request, response, body) => {
    response.setHeader("x-request-id", echo)
    if ((JSON.parse(body) as { stream?: boolean }).stream !== true) {
      return json(response, 200, { id: echo, model: echo, choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "hi" } }] })
    }
    response.writeHead(200, { "content-type": "text/event-stream" })
    response.end(`data: ${JSON.stringify({ id: echo, model: echo, choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`)
  }

  it.live("redacted on every span and in the finish parts of generateText and streamText", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const tracer = yield* RecordingTracer.make(spans)
      const [text, parts] = yield* against(
        handler,
        Effect.all([LanguageModel.generateText({ prompt: "Hi" }), Stream.runCollect(LanguageModel.streamText({ prompt: "Hi" }))])
      ).pipe(Effect.withTracer(tracer))
      expect(spans.some((span) => span.name === "LanguageModel.generateText")).toBe(true)
      const texts = [
        ...spans.map((span) => Formatter.format(Object.fromEntries(span.attributes))),
        // The reply's own values (the response-metadata part) are the service's data, as core returns them.
        Formatter.format(text.content.filter((part) => part.type === "finish")),
        Formatter.format([...parts].filter((part) => part.type === "finish"))
      ]
      expect(texts.join("\n")).toContain("[redacted]")
      for (const seen of texts) expect(seen).not.toContain(apiKey)
    }))
})

describe("streamText: a chunk off the protocol", () => {
  it.live("ends the stream with an InvalidResponseError, not a dropped chunk", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(against(
        (_request, response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.end(`data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { content: "a" } }] })}\n\ndata: {"choices": 7}\n\n`)
        },
        Stream.runDrain(LanguageModel.streamText({ prompt: "Hi" }))
      ))
      expect(error.reason._tag).toBe("InvalidResponseError")
      expect(error.reason.cause).toMatchObject({ _tag: "ResponseDecodeError" })
    }))
})

describe("streamText holds at most maxResponseBytes", () => {
  it.live("an endless stream ends typed at the limit, its connection closed", () => {
    let written = 0
    const piece = `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { content: "y".repeat(4096) } }] })}\n\n`
    const endless: Handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      const next = () => {
        while (!response.destroyed && written < 64 * MiB) {
          written += piece.length
          if (!response.write(piece)) return response.once("drain", next)
        }
        response.end()
      }
      next()
    }
    return Effect.gen(function*() {
      const error = yield* Effect.flip(against(endless, Stream.runDrain(LanguageModel.streamText({ prompt: "Go on" })), MiB))
      expect(error.reason._tag).toBe("InvalidResponseError")
      expect(error.isRetryable).toBe(false)
      expect(error.reason.cause).toMatchObject({ _tag: "ResponseTooLargeError", limit: MiB })
      expect(written).toBeGreaterThan(MiB)
      expect(written).toBeLessThan(64 * MiB)
    })
  })
})

describe("statuses: the reason effect/ai users match on, with the status and the service's message", () => {
  const cases = [
    { status: 400, reason: "InvalidRequestError", retryable: false },
    { status: 401, reason: "AuthenticationError", retryable: false, kind: "InvalidKey" },
    { status: 403, reason: "AuthenticationError", retryable: false, kind: "InsufficientPermissions" },
    { status: 404, reason: "InvalidRequestError", retryable: false },
    { status: 429, reason: "RateLimitError", retryable: true },
    { status: 500, reason: "InternalProviderError", retryable: true },
    { status: 503, reason: "InternalProviderError", retryable: true }
  ] as const
  for (const { kind, reason, retryable, status } of cases as ReadonlyArray<(typeof cases)[number] & { readonly kind?: string }>) {
    it.live(`${status}`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(against(
          (_request, response) =>
            json(response, status, { error: { message: `refused ${status} for ${apiKey}`, type: "x" } }, { "x-request-id": "req_1" }),
          LanguageModel.generateText({ prompt: "Hi" })
        ))
        expect(error.reason._tag).toBe(reason)
        expect(error.isRetryable).toBe(retryable)
        if (kind !== undefined) expect(error.reason).toMatchObject({ kind })
        expect(error.reason).toMatchObject({ http: { response: { status, headers: { "x-request-id": "req_1" } } } })
        const http = (error.reason as { readonly http?: { readonly body?: string } }).http
        expect(http?.body).toContain(`refused ${status}`)
        expect(JSON.stringify(error.reason)).not.toContain(apiKey)
        expect(error.message).not.toContain(apiKey)
        expect(error.reason).toMatchObject({
          metadata: { switchboard: { status, requestId: "req_1", method: "POST", url: expect.stringContaining("/chat/completions") } }
        })
        if (status !== 429) expect(error.message).toContain(`refused ${status}`)
      }))
  }

  it.live("429 with Retry-After: retryAfter on the error; insufficient_quota: QuotaExhaustedError", () =>
    Effect.gen(function*() {
      const limited = yield* Effect.flip(against(
        (_request, response) => json(response, 429, { error: { message: "slow down" } }, { "retry-after": "7" }),
        LanguageModel.generateText({ prompt: "Hi" })
      ))
      expect(limited.reason._tag).toBe("RateLimitError")
      expect(Duration.toMillis(limited.retryAfter!)).toBe(7000)
      const exhausted = yield* Effect.flip(against(
        (_request, response) => json(response, 429, { error: { message: "no credit", code: "insufficient_quota" } }),
        LanguageModel.generateText({ prompt: "Hi" })
      ))
      expect(exhausted.reason._tag).toBe("QuotaExhaustedError")
      expect(exhausted.isRetryable).toBe(false)
    }))

  it.live("a connection cut before an answer: a retryable NetworkError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(against((request) => request.socket.destroy(), LanguageModel.generateText({ prompt: "Hi" })))
      expect(error.reason).toMatchObject({ _tag: "NetworkError", reason: "TransportError", method: "POST" })
      expect(error.reason.cause).toMatchObject({ _tag: "TransportError" })
      expect(error.isRetryable).toBe(true)
    }))

  it.live("streamText too", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(against(
        (_request, response) => json(response, 429, { error: { message: "slow down" } }),
        Stream.runDrain(LanguageModel.streamText({ prompt: "Hi" }))
      ))
      expect(error.reason).toMatchObject({ _tag: "RateLimitError", http: { response: { status: 429 } } })
    }))
})

describe("EmbeddingModel: a reply that cannot answer the request", () => {
  /** Vectors of 2 numbers, but 3 for the second input. */
  const uneven: Handler = (_request, response, body) => {
    const inputs = (JSON.parse(body) as { input: Array<string> }).input
    json(response, 200, { data: inputs.map((_, index) => ({ index, embedding: index === 1 ? [1, 2, 3] : [1, 2] })) })
  }
  const embedding = (options: Omit<SwitchboardEmbeddingModel.Options, "model"> = {}) =>
    SwitchboardEmbeddingModel.layer({ model: "e", ...options })

  it.live("vectors of two lengths, or a length other than the dimensions asked: InvalidResponseError, core's ResponseDecodeError its cause", () =>
    Effect.forEach(
      [
        [{}, ["a", "b"], /for input 1, input 0's has 2$/],
        [{ dimensions: 3 }, ["a"], /not the 3 dimensions asked$/]
      ] as const,
      ([options, inputs, message]) =>
        Effect.scoped(Effect.flatMap(serve(uneven), (hostile) =>
          Effect.gen(function*() {
            const model = yield* EmbeddingModel.EmbeddingModel
            const error = yield* Effect.flip(model.embedMany(inputs))
            expect(error.reason._tag).toBe("InvalidResponseError")
            expect(error.reason.cause).toMatchObject({ _tag: "ResponseDecodeError" })
            expect((error.reason.cause as { readonly message: string }).message).toMatch(message)
          }).pipe(
            Effect.provide(
              embedding(options).pipe(
                Layer.provideMerge(NodeSwitchboard.layer({ baseUrl: hostile.url, apiKey, maxRetries: 0 })),
                Layer.orDie
              )
            )
          )))
    ))
})

describe("streamText: many calls, their deltas interleaved", () => {
  const calls = 300
  const args = (i: number) => JSON.stringify({ extra: { n: i } })
  /** Each call's arguments in three pieces: `{"extra":`, `{"n":i}` and `}`. */
  const pieces = (i: number) => {
    const whole = args(i)
    return [whole.slice(0, 9), whole.slice(9, -1), whole.slice(-1)]
  }
  const chunk = (tool_calls: ReadonlyArray<unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { tool_calls }, finish_reason: finish }] })}\n\n`
  const all = Array.from({ length: calls }, (_, i) => i)
  const rotated = all.map((i) => (i * 7) % calls)

  it.live("every call starts once, before its deltas, which join to its arguments; then its call", () =>
    against(
      (_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end(
          // Calls open with an id and name; call 0 with its first piece too (it starts here).
          chunk(all.map((i) => ({ index: i, id: `call_${i}`, type: "function", function: { name: "configure", arguments: i === 0 ? pieces(0)[0] : "" } }))) +
            // First pieces in reverse (call 0 its second), the even calls' second piece in the same chunk.
            chunk([...all].reverse().flatMap((i) =>
              i === 0 ? [{ index: 0, function: { arguments: pieces(0)[1] } }] :
                [{ index: i, function: { arguments: pieces(i)[0] } }, ...(i % 2 === 0 ? [{ index: i, function: { arguments: pieces(i)[1] } }] : [])]
            )) +
            // The rest, interleaved.
            chunk(rotated.flatMap((i) => [
              ...(i % 2 === 1 ? [{ index: i, function: { arguments: pieces(i)[1] } }] : []),
              { index: i, function: { arguments: pieces(i)[2] } }
            ])) +
            chunk([], "tool_calls") + "data: [DONE]\n\n"
        )
      },
      Effect.gen(function*() {
        const parts = yield* Stream.runCollect(LanguageModel.streamText({ prompt: "Configure", toolkit: kit, disableToolCallResolution: true }))
        const starts = new Map<string, number>()
        const deltas = new Map<string, string>()
        for (const part of parts) {
          if (part.type === "tool-params-start") {
            expect(starts.has(part.id)).toBe(false)
            expect(deltas.has(part.id)).toBe(false)
            starts.set(part.id, 1)
          } else if (part.type === "tool-params-delta") {
            expect(starts.has(part.id)).toBe(true)
            deltas.set(part.id, (deltas.get(part.id) ?? "") + part.delta)
          }
        }
        expect(starts.size).toBe(calls)
        for (const i of all) expect(deltas.get(`call_${i}`)).toBe(args(i))
        const toolCalls = parts.flatMap((part) => (part.type === "tool-call" ? [[part.id, part.params] as const] : []))
        expect(toolCalls).toEqual(all.map((i) => [`call_${i}`, { extra: { n: i } }]))
      })
    ))
})

describe("generateObject: a value that does not match the schema, 1 MiB long, echoing the key", () => {
  const reply = (_request: Http.IncomingMessage, response: Http.ServerResponse) =>
    json(response, 200, completionWithCall("respond", JSON.stringify({ a: apiKey, pad: "p".repeat(MiB) })))
  const schema = Schema.Struct({ a: Schema.Number })

  it.live("effect/ai's StructuredOutputError, its responseText redacted, the first 4,000 characters", () =>
    Effect.map(Effect.flip(against(reply, LanguageModel.generateObject({ prompt: "Options", schema }))), (error) => {
      expect(error.reason._tag).toBe("StructuredOutputError")
      const { description, responseText } = error.reason as AiError.StructuredOutputError
      expect(responseText.startsWith(`{"a":"[redacted]"`)).toBe(true)
      expect(responseText.length).toBeLessThan(4100)
      expect(description.length).toBeLessThan(1100)
      expect(Util.inspect(error, { depth: 10 })).not.toContain(apiKey)
    }))

  it.live("strict, the value itself 1 MiB: InvalidOutputError, its description bounded, the key redacted (held: effect's schema message cuts long values)", () =>
    Effect.map(
      Effect.flip(against(
        (_request, response) => json(response, 200, completionWithCall("respond", JSON.stringify({ a: `${apiKey}${"p".repeat(MiB)}` }))),
        LanguageModel.generateObject({ prompt: "Options", schema }),
        undefined,
        { strict: true }
      )),
      (error) => {
        expect(error.reason._tag).toBe("InvalidOutputError")
        expect(error.message.length).toBeLessThan(2000)
        expect(Util.inspect(error, { depth: 10 })).not.toContain(apiKey)
      }
    ))
})

describe("a 429 whose Retry-After is 1e308 seconds", () => {
  it.live("effect/ai's RateLimitError waits at most a day", () =>
    Effect.map(
      Effect.flip(against(
        (_request, response) => json(response, 429, { error: { message: "slow down" } }, { "retry-after": "1e308" }),
        LanguageModel.generateText({ prompt: "Hi" })
      )),
      (error) => {
        expect(error.reason._tag).toBe("RateLimitError")
        const { retryAfter } = error.reason as AiError.RateLimitError
        expect(retryAfter === undefined ? undefined : Duration.toMillis(retryAfter)).toBe(24 * 60 * 60 * 1000)
      }
    ))
})
