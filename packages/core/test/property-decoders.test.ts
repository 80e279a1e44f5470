/**
 * Property tests of everything that reads what a server sends: the SSE
 * decoder, the stream of chat chunks, and every JSON call's response
 * handling (status → error, body → value). Whatever arrives (random bytes,
 * random JSON, valid values taken apart, any split into reads, any status and
 * `Retry-After`) ends in a typed error or in valid output: never a defect,
 * never a hang (each run is bounded by a live-clock guard that is never
 * expected to fire).
 *
 * The "server" is an in-memory `HttpClient` that answers with the generated
 * status, headers and body, split into the generated reads.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Chat from "../src/Chat.js"
import * as HttpClientWire from "../src/HttpClientWire.js"
import * as Embeddings from "../src/Embeddings.js"
import * as Models from "../src/Models.js"
import * as Moderations from "../src/Moderations.js"
import * as Protocol from "../src/Protocol.js"
import * as Sse from "../src/Sse.js"
import * as Switchboard from "../src/Switchboard.js"
import * as SwitchboardConfig from "../src/SwitchboardConfig.js"
import { isSwitchboardError } from "../src/SwitchboardError.js"
import * as TaskJournal from "../src/TaskJournal.js"
import * as Videos from "../src/Videos.js"
import { errorTagByStatus, expectedErrorTag } from "@switchboard/testing/Statuses"

const fc = FastCheck
// Hundreds of generated cases per test: a few seconds on a quiet machine,
// far more on a loaded one, where the default 30 s would cut them short.
vi.setConfig({ testTimeout: 120_000 })
const SEED = 777
const RUNS = 300
const utf8 = new TextEncoder()

/** Splits `bytes` at the given cut points (any, including inside a UTF-8 character). */
const split = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b)
  const out: Array<Uint8Array> = []
  let from = 0
  for (const point of points) {
    if (point > from) out.push(bytes.subarray(from, point))
    from = Math.max(from, point)
  }
  out.push(bytes.subarray(from))
  return out
}
const cuts = fc.array(fc.nat(), { maxLength: 8 })

/** Runs `effect` to its exit, bounded by a guard on the live clock; a hang fails the property. */
const settle = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.timeoutFail(Effect.exit(effect), { duration: "5 seconds", onTimeout: () => new Error("hang: no exit within 5 s") })
  )

/** The typed failure of an exit; throws on a defect, an interruption or an untyped failure. */
const typedFailure = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return undefined
  const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
  if (Cause.isDie(exit.cause) || Cause.isInterrupted(exit.cause) || !isSwitchboardError(error)) {
    throw new Error(`not a typed failure: ${Cause.pretty(exit.cause)}`)
  }
  return error
}

const asyncProperty = <A>(arbitrary: FastCheck.Arbitrary<A>, check: (a: A) => Promise<void>, numRuns = RUNS) =>
  fc.assert(fc.asyncProperty(arbitrary, check), { numRuns, seed: SEED })

// ---------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------

const viaJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

/** Any field of any depth of `value` replaced by any JSON value. */
const takenApart = <A>(valid: FastCheck.Arbitrary<A>) =>
  fc.tuple(valid, fc.array(fc.nat(), { maxLength: 5 }), fc.jsonValue({ maxDepth: 2 })).map(([value, path, replacement]) => {
    const mutate = (v: unknown, rest: ReadonlyArray<number>): unknown => {
      if (rest.length === 0 || typeof v !== "object" || v === null) return replacement
      const entries = Object.entries(v)
      if (entries.length === 0) return replacement
      const [key, inner] = entries[rest[0]! % entries.length]!
      const copy: Record<string, unknown> = Array.isArray(v) ? [...v] as never : { ...v }
      copy[key] = mutate(inner, rest.slice(1))
      return copy
    }
    return mutate(viaJson(value), path)
  })

/**
 * The JSON text of `value` with a field at any depth replaced by a value
 * nested 10,000–12,000 levels (arrays or objects), or by a very wide one:
 * built as text, since no recursive function may walk it.
 */
const deepOrWide = <A>(valid: FastCheck.Arbitrary<A>) =>
  fc.tuple(takenApart(valid.map((v) => v)), fc.integer({ min: 10_000, max: 12_000 }), fc.constantFrom("[]", "{}", "wide")).map(
    ([value, levels, kind]) => {
      const hole = JSON.stringify(value === undefined ? null : value)
      const inner = kind === "wide"
        ? `[${Array.from({ length: levels }, (_, i) => `{"i":${i}}`).join(",")}]`
        : kind === "[]" ? `${"[".repeat(levels)}1${"]".repeat(levels)}` : `${"{\"a\":".repeat(levels)}1${"}".repeat(levels)}`
      // The first scalar of the text is where the value goes.
      const at = hole.search(/(?<=[:[,])(?:-?\d|"|true|false|null)/)
      if (at === -1) return inner
      const rest = hole.slice(at).replace(/^(?:"(?:[^"\\]|\\.)*"|[^,\]}]*)/, "")
      return hole.slice(0, at) + inner + rest
    }
  )

const validChunk = Arbitrary.make(Protocol.ChatCompletionChunk).map(viaJson)

/** One SSE event's text: a valid chunk, a broken one, random JSON, junk, an error, a comment, [DONE]… */
const sseEvent = fc.oneof(
  { weight: 6, arbitrary: validChunk.map((c) => `data: ${JSON.stringify(c)}\n\n`) },
  { weight: 2, arbitrary: takenApart(Arbitrary.make(Protocol.ChatCompletionChunk)).map((c) => `data: ${JSON.stringify(c)}\n\n`) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((j) => `data: ${JSON.stringify(j)}\n\n`) },
  { weight: 1, arbitrary: deepOrWide(Arbitrary.make(Protocol.ChatCompletionChunk)).map((text) => `data: ${text}\n\n`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => `data: ${s}\n\n`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((m) => `data: ${JSON.stringify({ error: { message: m } })}\n\n`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `event: ping\ndata: ${s}\n\n`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `: ${s.replace(/[\r\n]/g, "")}\n`) },
  { weight: 1, arbitrary: fc.constant("data: [DONE]\n\n") },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) }
)
const sseBody = fc.tuple(fc.array(sseEvent, { maxLength: 12 }), fc.constantFrom("\n", "\r\n", "\r")).map(([events, eol]) =>
  utf8.encode(events.join("").replace(/\n/g, eol))
)
const randomBytes = fc.uint8Array({ maxLength: 300 })

// ---------------------------------------------------------------------------
// The SSE decoder alone
// ---------------------------------------------------------------------------

const decodeEvents = (reads: ReadonlyArray<Uint8Array>) => Stream.runCollect(Sse.decode(Stream.fromIterable(reads)))

describe("Sse.decode", () => {
  const property = (bytes: FastCheck.Arbitrary<Uint8Array>) =>
    asyncProperty(fc.tuple(bytes, cuts), async ([body, at]) => {
      const whole = await settle(decodeEvents([body]))
      const pieces = await settle(decodeEvents(split(body, at)))
      expect(typedFailure(whole) ?? "events").toSatisfy((e) => e === "events" || (e as { _tag: string })._tag === "ResponseTooLargeError")
      // However the bytes are split into reads, the same events come out.
      expect(Exit.map(pieces, Chunk.toReadonlyArray)).toEqual(Exit.map(whole, Chunk.toReadonlyArray))
      if (Exit.isSuccess(whole)) for (const event of whole.value) expect(typeof event.data).toBe("string")
    })

  it(`random bytes in random reads: events or a ResponseTooLargeError, the same for every split (${RUNS} runs)`, () => property(randomBytes))
  it(`SSE-shaped bodies of random events in random reads (${RUNS} runs)`, () => property(sseBody))
  it("an event larger than maxEventSize is a ResponseTooLargeError, not a growing buffer", async () => {
    const exit = await settle(Stream.runCollect(Sse.decode(Stream.make(utf8.encode(`data: ${"x".repeat(2_000)}`)), { maxEventSize: 1_000 })))
    expect(typedFailure(exit)?._tag).toBe("ResponseTooLargeError")
  })
})

// ---------------------------------------------------------------------------
// The whole SDK over an in-memory server
// ---------------------------------------------------------------------------

interface Reply {
  readonly status: number
  readonly headers: Record<string, string>
  readonly reads: ReadonlyArray<Uint8Array>
}

let reply: Reply = { status: 200, headers: {}, reads: [] }
const server = HttpClient.make((request) =>
  Effect.sync(() => {
    const reads = reply.reads
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        for (const read of reads) controller.enqueue(read)
        controller.close()
      }
    })
    return HttpClientResponse.fromWeb(request, new Response(body, { status: reply.status, headers: reply.headers }))
  })
)
const sdk = Switchboard.layer.pipe(
  Layer.provideMerge(
    SwitchboardConfig.layer({ baseUrl: "http://127.0.0.1:9", apiKey: "sk-test", maxRetries: 1, retryBaseDelay: 0, maxRetryDelay: 0 })
  ),
  Layer.provide(HttpClientWire.layer),
  Layer.provide(Layer.succeed(HttpClient.HttpClient, server)),
  Layer.provide(TaskJournal.layerMemory),
  Layer.orDie
)
const run = <A, E>(effect: Effect.Effect<A, E, Switchboard.Services>, answer: Reply) => {
  reply = answer
  return settle(Effect.provide(effect, sdk))
}

const statuses = fc.oneof(
  { weight: 4, arbitrary: fc.constant(200) },
  { weight: 3, arbitrary: fc.constantFrom(400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503) },
  { weight: 1, arbitrary: fc.integer({ min: 201, max: 599 }).filter((s) => s !== 204 && s !== 205 && s !== 304) }
)
const headers = fc.record({
  "x-request-id": fc.string({ maxLength: 10 }).map((s) => s.replace(/[^\x21-\x7e]/g, "")),
  "retry-after": fc.oneof(fc.nat().map(String), fc.string({ maxLength: 12 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")), fc.constant("Wed, 21 Oct 2015 07:28:00 GMT")),
  "retry-after-ms": fc.oneof(fc.nat().map(String), fc.constant("-5"), fc.constant("soon"))
}, { requiredKeys: [] })

const isSuccess = (status: number) => status >= 200 && status < 300

/** A response body for `schema`: valid, taken apart, random JSON, an error body or random bytes. */
const jsonBody = <A, I>(schema: Schema.Schema<A, I>) =>
  fc.oneof(
    { weight: 3, arbitrary: Arbitrary.make(schema).map((v) => JSON.stringify(Schema.encodeSync(schema)(v))) },
    { weight: 2, arbitrary: takenApart(Arbitrary.make(schema).map((v) => Schema.encodeSync(schema)(v))).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: deepOrWide(Arbitrary.make(schema).map((v) => Schema.encodeSync(schema)(v))) },
    { weight: 1, arbitrary: Arbitrary.make(Protocol.ErrorBody).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) }
  ).map((text) => utf8.encode(text))

const answers = (body: FastCheck.Arbitrary<Uint8Array>) =>
  fc.record({ status: statuses, headers, body: fc.oneof({ weight: 5, arbitrary: body }, { weight: 1, arbitrary: randomBytes }), at: cuts })
    .map(({ at, body, headers, status }): Reply & { readonly text: string } => ({
      status,
      headers,
      reads: split(body, at),
      text: new TextDecoder().decode(body)
    }))

/**
 * The call against `answer`: a 2xx whose body the schema accepts succeeds
 * (unless the capability's own check rejects it), any other 2xx is a
 * `ResponseDecodeError`, any other status (3xx included) the error its status
 * maps to.
 */
const checkCall = <A, I>(
  schema: Schema.Schema<A, I>,
  call: Effect.Effect<unknown, unknown, Switchboard.Services>,
  extraCheck: (value: A) => boolean = () => true,
  tagByStatus: Readonly<Record<number, string>> = errorTagByStatus
) =>
  asyncProperty(answers(jsonBody(schema)), async (answer) => {
    const exit = await run(call, answer)
    const error = typedFailure(exit)
    let parsed: Option.Option<A> = Option.none()
    try {
      parsed = Schema.decodeUnknownOption(schema, { onExcessProperty: "preserve" })(JSON.parse(answer.text))
    } catch {
      // not JSON
    }
    if (!isSuccess(answer.status)) {
      expect(error?._tag).toBe(expectedErrorTag(answer.status, tagByStatus))
      expect((error as { status?: number }).status ?? 408).toBe(answer.status)
    } else if (Option.isSome(parsed) && extraCheck(parsed.value)) {
      expect(error).toBeUndefined()
    } else {
      expect(error?._tag).toMatch(/^(ResponseDecodeError)$/)
    }
  })

describe("JSON responses: any status, headers and body end typed", () => {
  const hello: Protocol.ChatRequest = { model: "m", messages: [{ role: "user", content: "hi" }] }
  it(`Chat.create (${RUNS} runs)`, () => checkCall(Protocol.ChatCompletion, Chat.create(hello)))
  it(`Embeddings.create (${RUNS} runs)`, () =>
    checkCall(
      Protocol.EmbeddingResponse,
      Embeddings.create({ model: "e", input: "x" })
    ))
  it(`Embeddings.embedMany (${RUNS} runs): a vector per input, or an error`, () =>
    checkCall(
      Protocol.EmbeddingResponse,
      Embeddings.embedMany(["a", "b"], { model: "e" }),
      (response) =>
        response.data.length === 2 && new Set(response.data.map((d) => d.index)).size === 2 &&
        response.data.every((d) => d.index === 0 || d.index === 1)
    ))
  it(`Moderations.check (${RUNS} runs)`, () =>
    checkCall(Protocol.ModerationResponse, Moderations.check("x"), (response) => response.results.length > 0))
  it(`Models.list (${RUNS} runs)`, () => checkCall(Protocol.ModelList, Models.list))
  it(`Videos.status (${RUNS} runs)`, () =>
    checkCall(
      Protocol.TaskStatusResponse,
      Videos.status("task_1"),
      (response) => response.status !== "succeed" || /^https?:\/\/[^\s/?#]+[^\s]*$/i.test(response.video_url ?? ""),
      // The service does not know the task.
      { ...errorTagByStatus, 404: "TaskNotFoundError" }
    ))
})

describe("streams: any status and any body end typed, and a success is whole", () => {
  const hello: Protocol.ChatRequest = { model: "m", messages: [{ role: "user", content: "hi" }] }
  const streamAnswers = fc.record({
    status: fc.oneof({ weight: 5, arbitrary: fc.constant(200) }, { weight: 1, arbitrary: statuses }),
    body: fc.oneof({ weight: 5, arbitrary: sseBody }, { weight: 1, arbitrary: randomBytes }),
    at: cuts
  })

  it(`Chat.stream + Chat.accumulate (${RUNS} runs)`, () =>
    asyncProperty(streamAnswers, async ({ at, body, status }) => {
      const answer = { status, headers: { "content-type": "text/event-stream" }, reads: split(body, at) }
      const chunks = await run(Stream.runCollect(Chat.stream(hello)), answer)
      const folded = await run(Chat.accumulate(Chat.stream(hello)), answer)
      const error = typedFailure(chunks)
      typedFailure(folded)
      if (!isSuccess(status)) expect(error?._tag).toBe(expectedErrorTag(status))
      if (Exit.isSuccess(chunks)) {
        const received = Chunk.toReadonlyArray(chunks.value)
        // A stream that succeeds either said [DONE] or gave a finish_reason: never a silent short answer.
        const text = new TextDecoder().decode(body)
        expect(received.some((c) => c.choices.some((choice) => choice.finish_reason)) || /data: ?\[DONE\]/.test(text)).toBe(true)
        for (const chunk of received) expect(Schema.is(Protocol.ChatCompletionChunk)(chunk)).toBe(true)
      }
    }))
})
