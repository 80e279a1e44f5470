/**
 * Streamed chat completions (decision 1): server-sent events → chunks, and
 * chunks → one completion. Opening, retries and time limits are
 * `Transport.stream`'s.
 */
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import * as ChatFold from "../ChatFold.js"
import type * as Protocol from "../Protocol.js"
import { ChatCompletionChunk } from "../Protocol.js"
import * as Sse from "../Sse.js"
import {
  ResponseDecodeError,
  ResponseTooLargeError,
  StreamError,
  type SwitchboardError
} from "../SwitchboardError.js"
import * as Issue from "./issue.js"
import * as Json from "./json.js"
import { isNullableString, isObject, isOptional } from "./plain.js"
import { truncate } from "./text.js"
import { decoder } from "./validate.js"

// ---------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------

/** The request with `stream: true`, and `include_usage` when asked for. */
export const streamingRequest = (request: Protocol.ChatRequest, includeUsage: boolean | undefined): Protocol.ChatRequest =>
  includeUsage ?
    { ...request, stream: true, stream_options: { ...request.stream_options, include_usage: true } } :
    { ...request, stream: true }

/** What stream errors need from the call: the request id and the key's redaction. */
export interface Context {
  readonly requestId: string | undefined
  readonly redact: (text: string) => string
}

const withId = (requestId: string | undefined) => (requestId === undefined ? {} : { requestId })

// ---------------------------------------------------------------------------
// Events → chunks
// ---------------------------------------------------------------------------

// Per-chunk cost decides streaming throughput, and the compiled schema check
// costs more than `JSON.parse` itself. So a chunk is first checked by the
// hand-written `isPlainChunk`, which accepts only values the schema accepts
// (a property test holds it to that) and needs no copy: the schema has no
// transformations, so a value it accepts is its own decoding. Anything else
// goes through the decoder compiled once here, which has the last word.
const decodeChunk = decoder(ChatCompletionChunk)


const isToolCallDelta = (u: unknown): boolean =>
  isObject(u) && isOptional(u.index, "number") && isOptional(u.id, "string") && isOptional(u.type, "string") &&
  (u.function === undefined ||
    (isObject(u.function) && isOptional(u.function.name, "string") && isOptional(u.function.arguments, "string")))

// `index` and `delta` are required here though the schema defaults them: a
// chunk without them is decoded, which fills them in.
const isChoice = (u: unknown): boolean => {
  if (!isObject(u) || typeof u.index !== "number" || !isNullableString(u.finish_reason)) return false
  const delta = u.delta
  if (!isObject(delta) || !isOptional(delta.role, "string") || !isNullableString(delta.content) || !isNullableString(delta.refusal)) {
    return false
  }
  return delta.tool_calls === undefined || (Array.isArray(delta.tool_calls) && delta.tool_calls.every(isToolCallDelta))
}

const isUsage = (u: unknown): boolean =>
  u === undefined || u === null ||
  (isObject(u) && typeof u.prompt_tokens === "number" && typeof u.completion_tokens === "number" &&
    typeof u.total_tokens === "number")

/** A fast, conservative `Schema.is(ChatCompletionChunk)`: true only where the schema agrees. */
export const isPlainChunk = (u: unknown): u is ChatCompletionChunk =>
  isObject(u) && isOptional(u.id, "string") && isOptional(u.object, "string") && isOptional(u.created, "number") &&
  isOptional(u.model, "string") && Array.isArray(u.choices) && u.choices.every(isChoice) && isUsage(u.usage)

/** An error the service sent in the stream: its message (found in the usual shapes) or its text. */
const streamError = (data: string, json: unknown, context: Context): StreamError => {
  const error = json === undefined ? undefined : Json.serviceError(json)
  const message = error?.message ?? (data.trim() === "" ? "the service sent an error event" : truncate(data))
  return new StreamError({
    message: context.redact(message),
    reason: "error-event",
    ...withId(context.requestId),
    ...(error?.code === undefined ? {} : { code: context.redact(error.code) })
  })
}

const decodeError = (reason: string, data: string, context: Context) =>
  new ResponseDecodeError({
    message: context.redact(`${reason} (stream event: ${truncate(data, 80)})`),
    body: context.redact(truncate(data)),
    ...withId(context.requestId)
  })

const cut = (message: string, context: Context) => new StreamError({ message, reason: "cut", ...withId(context.requestId) })

/** One event's data → a chunk, or the typed failure it stands for. */
const toChunk = (event: Sse.Event, context: Context): ChatCompletionChunk | StreamError | ResponseDecodeError => {
  let json: unknown
  try {
    json = Json.parse(event.data)
  } catch {
    // A plain-text error event is the service's message; a last event cut
    // inside its line is a cut, not a broken chunk.
    if (event.event === "error") return streamError(event.data, undefined, context)
    if (event.unterminated) return cut("the stream was cut inside an event", context)
    return decodeError("chunk: is not JSON", event.data, context)
  }
  if (event.event === "error" || (typeof json === "object" && json !== null && "error" in json && json.error)) {
    return streamError(event.data, json, context)
  }
  if (isPlainChunk(json)) return json
  const decoded = decodeChunk(json)
  return Either.isRight(decoded) ? decoded.right : decodeError(Issue.describe(decoded.left, "chunk"), event.data, context)
}

const hasFinishReason = (chunk: ChatCompletionChunk): boolean => {
  for (const choice of chunk.choices) if (choice.finish_reason) return true
  return false
}

/**
 * Events → chunks, one output `Chunk` per input `Chunk`. Only default
 * (`message`) events carry chunks; `error` events fail; other types (pings)
 * are skipped. `[DONE]` ends the stream; so does the end of the body, but
 * only after a `finish_reason` (decision 1).
 */
export const chunks = <E>(
  context: Context
): Channel.Channel<
  Chunk.Chunk<ChatCompletionChunk>,
  Chunk.Chunk<Sse.Event>,
  E | StreamError | ResponseDecodeError,
  E,
  void,
  unknown
> =>
  Channel.suspend(() => {
    let finished = false
    type Out = Channel.Channel<
      Chunk.Chunk<ChatCompletionChunk>,
      Chunk.Chunk<Sse.Event>,
      E | StreamError | ResponseDecodeError,
      E,
      void,
      unknown
    >
    const emit = (out: Array<ChatCompletionChunk>, next: Out): Out =>
      out.length === 0 ? next : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(out)), next)

    const loop: Out = Channel.readWithCause({
      onInput: (events: Chunk.Chunk<Sse.Event>) => {
        const out: Array<ChatCompletionChunk> = []
        for (const event of events) {
          if (event.event !== undefined && event.event !== "message" && event.event !== "error") continue
          if (event.data === "[DONE]") return emit(out, Channel.void)
          const chunk = toChunk(event, context)
          if (chunk instanceof StreamError || chunk instanceof ResponseDecodeError) {
            return emit(out, Channel.fail(chunk))
          }
          if (!finished && hasFinishReason(chunk)) finished = true
          out.push(chunk)
        }
        return emit(out, loop)
      },
      onFailure: Channel.failCause,
      onDone: () =>
        finished ? Channel.void : Channel.fail(
          cut("the stream ended before the completion did (no finish_reason, no [DONE])", context)
        )
    })
    return loop
  })

/** A streamed reply's body → chunks: `Transport.stream`'s `decode` for chat. */
export const decode = (
  body: Stream.Stream<Uint8Array, SwitchboardError>,
  reply: Context
): Stream.Stream<ChatCompletionChunk, SwitchboardError> =>
  Stream.pipeThroughChannel(Sse.decode(body), chunks<SwitchboardError>(reply))

// ---------------------------------------------------------------------------
// Chunks → completion: `ChatFold`, the one fold every path uses
// ---------------------------------------------------------------------------

/** Chunks → one completion (see `Chat.accumulate`), at most `maxCharacters` of text and arguments. */
export const accumulate = <E, R>(
  stream: Stream.Stream<ChatCompletionChunk, E, R>,
  maxCharacters: number
): Effect.Effect<Protocol.ChatCompletion, E | StreamError | ResponseDecodeError | ResponseTooLargeError, R> =>
  Effect.suspend(() => {
    const fold = ChatFold.make({ maxCharacters })
    return Effect.zipRight(
      Stream.runForEachChunk(stream, (chunk) => {
        for (const c of chunk) {
          // Failing ends the stream, which closes its connection.
          const tooLarge = fold.add(c)
          if (tooLarge) return Effect.fail(tooLarge)
        }
        return Effect.void
      }),
      Effect.suspend(fold.completion)
    )
  })

/** What `Chat.streamWithCompletion` emits (see there). */
export type Part =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "Completion"; readonly completion: Protocol.ChatCompletion }

/** The text deltas of the first choice, then the completion the chunks fold into (at most `maxCharacters`). */
export const withCompletion = <E, R>(
  stream: Stream.Stream<ChatCompletionChunk, E, R>,
  maxCharacters: number
): Stream.Stream<Part, E | StreamError | ResponseDecodeError | ResponseTooLargeError, R> =>
  Stream.suspend(() => {
    const fold = ChatFold.make({ maxCharacters })
    const deltas = Stream.mapChunksEffect(stream, (chunk) => {
      const out: Array<Part> = []
      for (const c of chunk) {
        const tooLarge = fold.add(c)
        if (tooLarge) return Effect.fail(tooLarge)
        for (const choice of c.choices) {
          if (choice.index === 0 && choice.delta.content) out.push({ _tag: "TextDelta", text: choice.delta.content })
        }
      }
      return Effect.succeed(Chunk.unsafeFromArray(out))
    })
    // Evaluated once the chunks have ended, so it sees all of them.
    const completion = Stream.fromEffect(
      Effect.suspend(() => Either.map(fold.completion(), (completion): Part => ({ _tag: "Completion", completion })))
    )
    return Stream.concat(deltas, completion)
  })

/** The text deltas of the first choice, without empty ones. */
export const text = <E, R>(stream: Stream.Stream<ChatCompletionChunk, E, R>): Stream.Stream<string, E, R> =>
  Stream.mapChunks(stream, (chunk) => {
    const out: Array<string> = []
    for (const c of chunk) {
      for (const choice of c.choices) {
        if (choice.index === 0 && choice.delta.content) out.push(choice.delta.content)
      }
    }
    return Chunk.unsafeFromArray(out)
  })
