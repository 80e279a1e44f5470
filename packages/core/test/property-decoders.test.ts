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
import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { vi } from "vitest"
import * as Chat from "../src/Chat.js"
import * as Embeddings from "../src/Embeddings.js"
import * as HttpClientWire from "../src/HttpClientWire.js"
import * as Models from "../src/Models.js"
import * as Moderations from "../src/Moderations.js"
import * as Protocol from "../src/Protocol.js"
import * as Sse from "../src/Sse.js"
import * as Switchboard from "../src/Switchboard.js"
import * as SwitchboardConfig from "../src/SwitchboardConfig.js"
import { isSwitchboardError } from "../src/SwitchboardError.js"
import * as TaskJournal from "../src/TaskJournal.js"
import * as Videos from "../src/Videos.js"
import { errorTagByStatus, expectedErrorTag } from "@switchboard/test-support/Statuses"
import * as Gen from "./generators.js"
import { mutate, viaJson } from "./jsonMutation.js"

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
const cuts = Arbitrary.array(Gen.nat, { maxLength: 8 })

/** Runs `effect` to its exit, bounded by a guard on the live clock; a hang fails the property. */
const settle = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.timeoutOrElse(Effect.exit(effect), {
      duration: "5 seconds",
      orElse: () => Effect.fail(new Error("hang: no exit within 5 s"))
    })
  )

/** The typed failure of an exit; throws on a defect, an interruption or an untyped failure. */
const typedFailure = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return undefined
  const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
  if (Cause.hasDies(exit.cause) || Cause.hasInterrupts(exit.cause) || !isSwitchboardError(error)) {
    throw new Error(`not a typed failure: ${Cause.pretty(exit.cause)}`)
  }
  return error
}

/** Every generated case must pass: the first failing one (shrunk) fails the test with its replay. */
const asyncProperty = async <A>(arbitrary: Arbitrary.Arbitrary<A>, check: (a: A) => Promise<void>, runs = RUNS) => {
  const result = await Effect.runPromise(
    // A rejected check is a failed case, shrunk and reported with its replay.
    Arbitrary.checkEffect(arbitrary, (a) => Effect.tryPromise(() => check(a).then(() => true)), { runs, seed: SEED })
  )
  const failure = Arbitrary.formatCheckFailure(result)
  if (failure !== undefined) throw new Error(failure)
}

// ---------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------

/** Any field of any depth of `value` replaced by any JSON value. */
const takenApart = <A>(valid: Arbitrary.Arbitrary<A>) =>
  Arbitrary.all([valid, Arbitrary.array(Gen.nat, { maxLength: 5 }), Gen.json]).pipe(
    Arbitrary.map(([value, path, replacement]) => mutate(viaJson(value), path, replacement))
  )

/**
 * The JSON text of `value` with a field at any depth replaced by a value
 * nested 10,000–12,000 levels (arrays or objects), or by a very wide one:
 * built as text, since no recursive function may walk it.
 */
const deepOrWide = <A>(valid: Arbitrary.Arbitrary<A>) =>
  Arbitrary.all([takenApart(valid), Gen.integer(10_000, 12_000), Gen.constantFrom("[]", "{}", "wide")]).pipe(Arbitrary.map(
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
  ))

const chunks = Arbitrary.schema(Protocol.ChatCompletionChunk)
const text = (arbitrary: Arbitrary.Arbitrary<string>, f: (s: string) => string) => arbitrary.pipe(Arbitrary.map(f))

/** One SSE event's text: a valid chunk, a broken one, random JSON, junk, an error, a comment, [DONE]… */
const sseEvent = Gen.oneof<string>(
  [6, chunks.pipe(Arbitrary.map((c) => `data: ${JSON.stringify(viaJson(c))}\n\n`))],
  [2, takenApart(chunks).pipe(Arbitrary.map((c) => `data: ${JSON.stringify(c)}\n\n`))],
  [1, Gen.json.pipe(Arbitrary.map((j) => `data: ${JSON.stringify(j)}\n\n`))],
  [1, deepOrWide(chunks).pipe(Arbitrary.map((t) => `data: ${t}\n\n`))],
  [1, text(Gen.string(30), (s) => `data: ${s}\n\n`)],
  [1, text(Gen.string(20), (m) => `data: ${JSON.stringify({ error: { message: m } })}\n\n`)],
  [1, text(Gen.string(20), (s) => `event: ping\ndata: ${s}\n\n`)],
  [1, text(Gen.string(20), (s) => `: ${s.replace(/[\r\n]/g, "")}\n`)],
  [1, Arbitrary.Constant("data: [DONE]\n\n")],
  [1, Gen.string(40)]
)
const sseBody = Arbitrary.all([Arbitrary.array(sseEvent, { maxLength: 12 }), Gen.constantFrom("\n", "\r\n", "\r")]).pipe(
  Arbitrary.map(([events, eol]) => utf8.encode(events.join("").replace(/\n/g, eol)))
)
const randomBytes = Gen.bytes(300)

// ---------------------------------------------------------------------------
// The SSE decoder alone
// ---------------------------------------------------------------------------

const decodeEvents = (reads: ReadonlyArray<Uint8Array>) => Stream.runCollect(Sse.decode(Stream.fromIterable(reads)))

describe("Sse.decode", () => {
  const property = (bytes: Arbitrary.Arbitrary<Uint8Array>) =>
    asyncProperty(Arbitrary.all([bytes, cuts]), async ([body, at]) => {
      const whole = await settle(decodeEvents([body]))
      const pieces = await settle(decodeEvents(split(body, at)))
      expect(typedFailure(whole) ?? "events").toSatisfy((e) => e === "events" || (e as { _tag: string })._tag === "ResponseTooLargeError")
      // However the bytes are split into reads, the same events come out.
      expect(pieces).toEqual(whole)
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

const statuses = Gen.oneof<number>(
  [4, Arbitrary.Constant(200)],
  [3, Gen.constantFrom(400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503)],
  [1, Gen.integer(201, 599).pipe(Arbitrary.filter((s) => s !== 204 && s !== 205 && s !== 304))]
)
const headers = Gen.partialRecord({
  "x-request-id": text(Gen.string(10), (s) => s.replace(/[^\x21-\x7e]/g, "")),
  "retry-after": Gen.oneof<string>(
    [1, Gen.nat.pipe(Arbitrary.map(String))],
    [1, text(Gen.string(12), (s) => s.replace(/[^\x20-\x7e]/g, ""))],
    [1, Arbitrary.Constant("Wed, 21 Oct 2015 07:28:00 GMT")]
  ),
  "retry-after-ms": Gen.oneof<string>([1, Gen.nat.pipe(Arbitrary.map(String))], [1, Arbitrary.Constant("-5")], [1, Arbitrary.Constant("soon")])
})

const isSuccess = (status: number) => status >= 200 && status < 300

/** A response body for `schema`: valid, taken apart, random JSON, an error body or random bytes. */
const jsonBody = <A, I>(schema: Schema.Codec<A, I>) => {
  const encoded = Arbitrary.schema(schema).pipe(Arbitrary.map((v) => Schema.encodeSync(schema)(v)))
  return Gen.oneof<string>(
    [3, encoded.pipe(Arbitrary.map((v) => JSON.stringify(v)))],
    [2, takenApart(encoded).pipe(Arbitrary.map((v) => JSON.stringify(v)))],
    [1, Gen.json.pipe(Arbitrary.map((v) => JSON.stringify(v)))],
    [1, deepOrWide(encoded)],
    [1, Arbitrary.schema(Protocol.ErrorBody).pipe(Arbitrary.map((v) => JSON.stringify(v)))],
    [1, Gen.string(60)]
  ).pipe(Arbitrary.map((t) => utf8.encode(t)))
}

const answers = (body: Arbitrary.Arbitrary<Uint8Array>) =>
  Arbitrary.all({ status: statuses, headers, body: Gen.oneof<Uint8Array>([5, body], [1, randomBytes]), at: cuts }).pipe(
    Arbitrary.map(({ at, body, headers, status }): Reply & { readonly text: string } => ({
      status,
      headers,
      reads: split(body, at),
      text: new TextDecoder().decode(body)
    }))
  )

/**
 * The call against `answer`: a 2xx whose body the schema accepts succeeds
 * (unless the capability's own check rejects it), any other 2xx is a
 * `ResponseDecodeError`, any other status (3xx included) the error its status
 * maps to.
 */
const checkCall = <A, I>(
  schema: Schema.Codec<A, I>,
  call: Effect.Effect<unknown, unknown, Switchboard.Services>,
  extraCheck: (value: A) => boolean = () => true,
  tagByStatus: Readonly<Record<number, string>> = errorTagByStatus
) =>
  asyncProperty(answers(jsonBody(schema)), async (answer) => {
    const exit = await run(call, answer)
    const error = typedFailure(exit)
    let parsed: Option.Option<A> = Option.none()
    try {
      parsed = Schema.decodeUnknownOption(schema)(JSON.parse(answer.text))
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
      Embeddings.create({ model: "e", input: "x" }),
      (response) => response.data.length === 1 && response.data[0]!.index === 0
    ))
  it(`Embeddings.embedMany (${RUNS} runs): a vector per input, or an error`, () =>
    checkCall(
      Protocol.EmbeddingResponse,
      Embeddings.embedMany(["a", "b"], { model: "e" }),
      (response) =>
        response.data.length === 2 && new Set(response.data.map((d) => d.index)).size === 2 &&
        response.data.every((d) => (d.index === 0 || d.index === 1) && d.embedding.length === response.data[0]!.embedding.length)
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
  const streamAnswers = Arbitrary.all({
    status: Gen.oneof<number>([5, Arbitrary.Constant(200)], [1, statuses]),
    body: Gen.oneof<Uint8Array>([5, sseBody], [1, randomBytes]),
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
        const received = chunks.value
        // A stream that succeeds either said [DONE] or gave a finish_reason: never a silent short answer.
        const text = new TextDecoder().decode(body)
        expect(received.some((c) => c.choices.some((choice) => choice.finish_reason)) || /data: ?\[DONE\]/.test(text)).toBe(true)
        for (const chunk of received) expect(Schema.is(Protocol.ChatCompletionChunk)(chunk)).toBe(true)
      }
    }))
})
