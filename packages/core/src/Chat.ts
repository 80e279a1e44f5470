/**
 * Chat completions: text, tool calling and multimodal input (spec 4.1),
 * whole or streamed (decision 1, `docs/streaming.md`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as Stream from "effect/Stream"
import * as ChatStream from "./internal/chatStream.js"
import * as Checks from "./internal/checks.js"
import * as GenAi from "./internal/genAi.js"
import { isPlainChatCompletion, isPlainChatRequest } from "./internal/plain.js"
import { encoder, plainDecoder } from "./internal/validate.js"
import * as Protocol from "./Protocol.js"
import * as StructuredOutput from "./StructuredOutput.js"
import { defaultMaxResponseBytes } from "./SwitchboardConfig.js"
import {
  type ConfigurationError,
  InvalidRequestError,
  type RequestError,
  type ResponseDecodeError,
  type ResponseTooLargeError,
  type StreamError,
  type StreamRequestError
} from "./SwitchboardError.js"
import { Transport } from "./Transport.js"

/**
 * Per-call options of a streamed completion.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamOptions {
  /**
   * Ask for a last chunk carrying `usage` (`stream_options.include_usage`).
   * The request's own `stream_options` are honoured too.
   */
  readonly includeUsage?: boolean | undefined
  /** Overrides the config's `streamFirstByteTimeout` for this call. */
  readonly firstByteTimeout?: Duration.Input | undefined
  /** Overrides the config's `streamIdleTimeout` for this call. */
  readonly idleTimeout?: Duration.Input | undefined
  /** Overrides the config's `streamTotalTimeout` for this call. */
  readonly totalTimeout?: Duration.Input | undefined
}

/**
 * The chat calls: a completion, or a stream of its chunks.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly create: (request: Protocol.ChatRequest) => Effect.Effect<Protocol.ChatCompletion, RequestError>
  readonly stream: (
    request: Protocol.ChatRequest,
    options?: StreamOptions
  ) => Stream.Stream<Protocol.ChatCompletionChunk, StreamRequestError>
}

/**
 * The service that makes chat calls (see `Service`).
 *
 * @since 0.1.0
 * @category tags
 */
export class Chat extends Context.Service<Chat, Service>()("@switchboard/core/Chat") {}

// A text request is checked by hand first, as a completion is (below).
const encodeRequest = encoder(Protocol.ChatRequest, isPlainChatRequest)
const decodeWithSchema = plainDecoder(Protocol.ChatCompletion)

// A completion is first checked by hand, conservatively (property-tested
// against the schema, docs/decisions.md): the compiled `Schema.is` was about
// 4.7 µs of a call's 55. The schema has the last word.
const decodeCompletion = (u: unknown): Result.Result<Protocol.ChatCompletion, SchemaIssue.Issue> =>
  isPlainChatCompletion(u) ? Result.succeed(u) : decodeWithSchema(u)

/**
 * The request, validated, for `create`, which reads one JSON body: a
 * streamed reply would fail to decode after being paid for.
 */
const notStreamed = (request: Protocol.ChatRequest) =>
  Result.flatMap(encodeRequest(request), (body) =>
    request.stream === true ?
      Result.fail(
        new InvalidRequestError({
          field: "stream",
          message:
            "stream: true is for Chat.stream (or Chat.streamText, Chat.streamWithCompletion); Chat.create returns the whole completion"
        })
      ) :
      Result.succeed(body))

/**
 * Builds the chat service over the `Transport`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.map(Effect.service(Transport), (transport): Service => ({
  create: (request) => {
    // Validated as the effect is made, as before; a branch, not a step the call runs through.
    const body = notStreamed(request)
    return Result.isFailure(body) ? Effect.fail(body.failure) : transport.call({
      method: "POST",
      path: "/chat/completions",
      body: body.success,
      decode: decodeCompletion,
      genAi: GenAi.chat(request)
    })
  },
  // Retried until the first chunk arrives, each attempt within the first-byte
  // timeout; never after (decision 6). The span lasts as long as the stream.
  stream: (request, options) =>
    // Checked when the stream runs; `suspend`, not `Stream.unwrap`, which
    // adds a stage every read passes through (docs/performance.md).
    Stream.suspend(() =>
      Result.match(encodeRequest(ChatStream.streamingRequest(request, options?.includeUsage)), {
        onFailure: Stream.fail,
        onSuccess: (body) =>
          transport.stream({
            method: "POST",
            path: "/chat/completions",
            body,
            genAi: GenAi.chatStream(request),
            firstByteTimeout: options?.firstByteTimeout,
            idleTimeout: options?.idleTimeout,
            totalTimeout: options?.totalTimeout,
            decode: ChatStream.decode
          })
      }))
}))

/**
 * The chat service over the `Transport`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Chat, never, Transport> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(Chat, make))

/**
 * Sends a chat request and returns the completion. The request is validated
 * first: a request the service would reject fails with an
 * `InvalidRequestError` naming the field, and nothing is sent. So does
 * `stream: true`: streamed replies come from `stream`, `streamText` or
 * `streamWithCompletion`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const create = (request: Protocol.ChatRequest): Effect.Effect<Protocol.ChatCompletion, RequestError, Chat> =>
  Chat.use((chat) => chat.create(request))

/**
 * Sends a chat request and decodes a value of `schema` from the reply: by a
 * forced `respond` tool call (default), or by `response_format` `json_schema`
 * (`mode: "json_schema"`, or `StructuredOutput.DefaultMode` set by a layer).
 * A reply that does not decode fails with a `StructuredOutputError` carrying
 * the text and the issue. See `docs/structured-output.md`.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 *
 * const Person = Schema.Struct({ name: Schema.String, age: Schema.Int })
 * const program = Effect.gen(function*() {
 *   const { value } = yield* Chat.createObject(
 *     { model: "gpt-4o-mini", messages: [{ role: "user", content: "Ada Lovelace, 36" }] },
 *     Person
 *   )
 *   return value.name
 * })
 * ```
 * @since 0.1.0
 * @category accessors
 */
export const createObject = <A, I, R>(
  request: Protocol.ChatRequest,
  schema: Schema.Codec<A, I, R>,
  options?: StructuredOutput.Options
): Effect.Effect<
  StructuredOutput.ObjectResult<A>,
  RequestError | StructuredOutput.StructuredOutputError,
  Chat | R
> => Chat.use((chat) => StructuredOutput.create(chat, request, schema, options))

/**
 * Streams a chat completion as its chunks (`stream: true`). The request is
 * validated like `create`'s and retried like a call until the first bytes of
 * the body arrive, never after. Fails with a `StreamError` on an error event
 * or a stream that ends unfinished, a `ResponseDecodeError` on a chunk that
 * is not one, a `TimeoutError` (`first-byte` or `idle`) when the service
 * falls silent. Interrupting the stream closes the connection.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Console from "effect/Console"
 * import * as Stream from "effect/Stream"
 *
 * const program = Chat.stream({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).pipe(
 *   Stream.runForEach((chunk) => Console.log(chunk.choices[0]?.delta.content ?? ""))
 * )
 * ```
 * @since 0.1.0
 * @category accessors
 */
export const stream = (
  request: Protocol.ChatRequest,
  options?: StreamOptions
): Stream.Stream<Protocol.ChatCompletionChunk, StreamRequestError, Chat> =>
  Stream.unwrap(Chat.useSync((chat) => chat.stream(request, options)))

/**
 * The text deltas of a streamed completion (its first choice), without the
 * empty ones.
 *
 * @since 0.1.0
 * @category accessors
 */
export const streamText = (
  request: Protocol.ChatRequest,
  options?: StreamOptions
): Stream.Stream<string, StreamRequestError, Chat> => ChatStream.text(stream(request, options))

/**
 * What `streamWithCompletion` emits: the text as it arrives, then, last, the
 * whole completion.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamPart = ChatStream.Part

/**
 * One streamed request giving both the text as it arrives (`TextDelta`
 * parts, first choice) and, as the last part, the `Completion` that a
 * non-streamed call would have returned (tool calls, finish reason, and
 * `usage`: asked for unless `includeUsage: false`). Fails like `stream`, and
 * like `accumulate` past its default limit (`ResponseTooLargeError`).
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Console from "effect/Console"
 * import * as Stream from "effect/Stream"
 *
 * const program = Chat.streamWithCompletion({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).pipe(
 *   Stream.runForEach((part) =>
 *     part._tag === "TextDelta" ? Console.log(part.text) : Console.log(part.completion.usage)
 *   )
 * )
 * ```
 * @since 0.1.0
 * @category accessors
 */
export const streamWithCompletion = (
  request: Protocol.ChatRequest,
  options?: StreamOptions
): Stream.Stream<StreamPart, StreamRequestError, Chat> =>
  ChatStream.withCompletion(
    stream(request, { ...options, includeUsage: options?.includeUsage ?? true }),
    defaultMaxResponseBytes
  )

/**
 * Folds streamed chunks into the completion a non-streamed call would have
 * returned, through `ChatFold`: content concatenated, tool-call deltas
 * merged into whole calls (by `index`; by `id`, else by position, when a
 * server omits `index`; a name sent in pieces joined, a name restated whole
 * kept once),
 * `finish_reason` and `usage` kept, `id`, `model` and `created` from the
 * chunks. An empty stream, or a tool call that never got an id or a name,
 * fails; so does a completion past `maxCharacters`.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 *
 * const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] }
 * const completion = Chat.accumulate(Chat.stream(request))
 * ```
 * @since 0.1.0
 * @category combinators
 */
export const accumulate = <E, R>(
  stream: Stream.Stream<Protocol.ChatCompletionChunk, E, R>,
  options?: AccumulateOptions
): Effect.Effect<Protocol.ChatCompletion, E | StreamError | ResponseDecodeError | ResponseTooLargeError | ConfigurationError, R> =>
  Effect.flatMap(
    Effect.fromResult(Checks.count("maxCharacters", options?.maxCharacters ?? defaultMaxResponseBytes, 1)),
    (maxCharacters) => ChatStream.accumulate(stream, maxCharacters)
  )

/**
 * What `accumulate` takes: the most characters it gathers.
 *
 * @since 0.1.0
 * @category models
 */
export interface AccumulateOptions {
  /**
   * Most characters of content, refusal and tool-call arguments gathered;
   * past it a `ResponseTooLargeError`, the stream (and its connection)
   * ended. Default 32 Mi (`SwitchboardConfig.defaultMaxResponseBytes`).
   */
  readonly maxCharacters?: number | undefined
}
