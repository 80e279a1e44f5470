/**
 * Streamed chat completions (decision 1): server-sent events → chunks, and
 * chunks → one completion. Opening, retries and time limits are
 * `Transport.stream`'s.
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import type * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as ChatFold from "../ChatFold.js"
import type * as Protocol from "../Protocol.js"
import { ChatCompletionChunk } from "../Protocol.js"
import * as Sse from "../Sse.js"
import {
  ResponseDecodeError,
  ResponseTooLargeError,
  StreamError,
  type StreamRequestError
} from "../SwitchboardError.js"
import * as Issue from "./issue.js"
import * as Json from "./json.js"
import { isNullableString, isObject, isOptional, isUsage } from "./plain.js"
import * as Streams from "./streams.js"
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
  /** Told at `[DONE]`: the rest of the body is only its end, so the wire may keep the connection. */
  readonly done?: (() => void) | undefined
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

/** A fast, conservative `Schema.is(ChatCompletionChunk)`: true only where the schema agrees. */
export const isPlainChunk = (u: unknown): u is ChatCompletionChunk =>
  isObject(u) && isOptional(u.id, "string") && isOptional(u.object, "string") && isOptional(u.created, "number") &&
  isOptional(u.model, "string") && Array.isArray(u.choices) && u.choices.every(isChoice) && isUsage(u.usage)

/** An error the service sent in the stream: its message (found in the usual shapes) or its text. */
const streamError = (data: string, json: unknown, context: Context): StreamError => {
  const error = json === undefined ? undefined : Json.serviceError(json)
  const message = error?.message ?? (data.trim() === "" ? "the service sent an error event" : data)
  // Redacted, then cut: a key across the cut would leave its start.
  return new StreamError({
    message: truncate(context.redact(message), 1000),
    reason: "error-event",
    ...withId(context.requestId),
    ...(error?.code === undefined ? {} : { code: truncate(context.redact(error.code)) })
  })
}

const decodeError = (reason: string, data: string, context: Context) => {
  const shown = context.redact(data)
  return new ResponseDecodeError({
    message: `${context.redact(reason)} (stream event: ${truncate(shown, 80)})`,
    body: truncate(shown),
    ...withId(context.requestId)
  })
}

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
  return Result.isSuccess(decoded) ? decoded.success : decodeError(Issue.describe(decoded.failure, "chunk"), event.data, context)
}

const hasFinishReason = (chunk: ChatCompletionChunk): boolean => {
  for (const choice of chunk.choices) if (choice.finish_reason) return true
  return false
}

/**
 * Events → chunks, one output batch per input batch. Only default
 * (`message`) events carry chunks; `error` events fail; other types (pings)
 * are skipped. `[DONE]` ends the stream; so does the end of the body, but
 * only after a `finish_reason` (decision 1).
 */
export const chunks = <E>(
  context: Context
): Channel.Channel<
  Arr.NonEmptyReadonlyArray<ChatCompletionChunk>,
  E | StreamError | ResponseDecodeError,
  void,
  Arr.NonEmptyReadonlyArray<Sse.Event>,
  E,
  unknown
> =>
  Streams.batches<Sse.Event, ChatCompletionChunk, StreamError | ResponseDecodeError, E>(() => {
    let finished = false
    return {
      onBatch: (events, out) => {
        for (const event of events) {
          if (event.event !== undefined && event.event !== "message" && event.event !== "error") continue
          if (event.data === "[DONE]") {
            context.done?.()
            return Cause.done()
          }
          const chunk = toChunk(event, context)
          if (chunk instanceof StreamError || chunk instanceof ResponseDecodeError) return Effect.fail(chunk)
          if (!finished && hasFinishReason(chunk)) finished = true
          out.push(chunk)
        }
        return undefined
      },
      onEnd: () =>
        finished ? Cause.done() : Effect.fail(
          cut("the stream ended before the completion did (no finish_reason, no [DONE])", context)
        )
    }
  })

/** A streamed reply's body → chunks: `Transport.stream`'s `decode` for chat. */
export const decode = (
  body: Stream.Stream<Uint8Array, StreamRequestError>,
  reply: Context
): Stream.Stream<ChatCompletionChunk, StreamRequestError> =>
  Stream.pipeThroughChannel(Sse.decode(body), chunks<StreamRequestError>(reply))

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
    return Effect.andThen(
      Stream.runForEachArray(stream, (batch) => {
        for (const c of batch) {
          // Failing ends the stream, which closes its connection.
          const tooLarge = fold.add(c)
          if (tooLarge) return Effect.fail(tooLarge)
        }
        return Effect.void
      }),
      Effect.suspend(() => Effect.fromResult(fold.completion()))
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
    // The completion is made at the end, so it sees every chunk.
    return Stream.pipeThroughChannel(
      stream,
      Streams.batches<ChatCompletionChunk, Part, StreamError | ResponseDecodeError | ResponseTooLargeError, E>(() => ({
        onBatch: (batch, out) => {
          for (const c of batch) {
            const tooLarge = fold.add(c)
            if (tooLarge) return Effect.fail(tooLarge)
            for (const choice of c.choices) {
              if (choice.index === 0 && choice.delta.content) out.push({ _tag: "TextDelta", text: choice.delta.content })
            }
          }
          return undefined
        },
        onEnd: (out) => {
          const completion = fold.completion()
          if (Result.isFailure(completion)) return Effect.fail(completion.failure)
          out.push({ _tag: "Completion", completion: completion.success })
          return Cause.done()
        }
      }))
    )
  })

/** The text deltas of the first choice, without empty ones. */
export const text = <E, R>(stream: Stream.Stream<ChatCompletionChunk, E, R>): Stream.Stream<string, E, R> =>
  Stream.pipeThroughChannel(
    stream,
    Streams.batches<ChatCompletionChunk, string, never, E>(() => ({
      onBatch: (batch, out) => {
        for (const c of batch) {
          for (const choice of c.choices) {
            if (choice.index === 0 && choice.delta.content) out.push(choice.delta.content)
          }
        }
        return undefined
      },
      onEnd: () => Cause.done()
    }))
  )
