/**
 * Chat completions → `effect/ai` response parts, and completion chunks →
 * stream parts.
 *
 * @internal
 */
import * as ChatFold from "@switchboard/core/ChatFold"
import { truncate } from "@switchboard/core/internal/text"
import * as Protocol from "@switchboard/core/Protocol"
import type * as ResponseMetadata from "@switchboard/core/ResponseMetadata"
import type { SwitchboardError } from "@switchboard/core/SwitchboardError"
import type * as AiError from "effect/ai/AiError"
import type * as Response from "effect/ai/Response"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { type Endpoint, invalidOutput, outputMismatch, type Site } from "./errors.js"

/**
 * How tool calls come back: as `tool-call` parts, or (structured output by a
 * forced tool) the call named `respond` as the text `effect/ai` decodes.
 */
export interface Reading {
  readonly structured?: {
    /** The forced tool's name; `undefined` when the value comes as the content (`json_schema`). */
    readonly callName: string | undefined
    /** The value travels as `{"value": …}` (a schema whose root is no object). */
    readonly wrapped: boolean
    /** Strict output: the value as the model sends it → as the schema encodes it. */
    readonly read?: ((value: unknown) => Result.Result<unknown, string>) | undefined
    /**
     * Otherwise: why the value does not decode by the schema, if it does not,
     * so that it fails here redacted and bounded (`effect/ai`'s error would
     * hold the whole text).
     */
    readonly check?: ((value: unknown) => string | undefined) | undefined
  } | undefined
  /** Strict tools: their parameters as the model sends them → as the tool's schema encodes them. */
  readonly params?: ((name: string, params: unknown) => Result.Result<unknown, string>) | undefined
}

/** Where the parts of one call come from, for the errors they may fail with. */
export interface Origin {
  readonly site: Site
  readonly endpoint: Endpoint
}

// A `Map`: the service names the reason, and `constructor` must be `other`, not `Object`.
const finishReasons: ReadonlyMap<string, Response.FinishReason> = new Map([
  ["stop", "stop"],
  ["length", "length"],
  ["tool_calls", "tool-calls"],
  ["function_call", "tool-calls"],
  ["content_filter", "content-filter"]
])

/** The service's `finish_reason` → `effect/ai`'s; `null` is `unknown`, anything else `other`. */
export const finishReason = (reason: string | null | undefined): Response.FinishReason =>
  reason == null ? "unknown" : finishReasons.get(reason) ?? "other"

/** `usage` → `effect/ai`'s; totals are `undefined` when the service sent none. */
export const usage = (usage: Protocol.Usage | null | undefined): Response.FinishPartEncoded["usage"] => ({
  inputTokens: { total: usage?.prompt_tokens },
  outputTokens: { total: usage?.completion_tokens }
})

/**
 * What the finish part says of the HTTP reply: `effect/ai`'s `response`
 * (status, headers as `ResponseMetadata` shows them: lower case, secrets
 * redacted), and under `metadata.switchboard` the request id, the processing
 * time, the remaining rate limits and the attempts.
 */
export const finishReply = (
  reply: ResponseMetadata.ResponseMetadata | undefined
): Pick<Response.FinishPartEncoded, "response" | "metadata"> => {
  if (reply === undefined) return {}
  const switchboard: Record<string, string | number> = { attempts: reply.attempts }
  if (reply.requestId !== undefined) switchboard["requestId"] = reply.requestId
  if (reply.processingTime !== undefined) switchboard["processingTimeMs"] = Duration.toMillis(reply.processingTime)
  const { remainingRequests, remainingTokens } = reply.rateLimits
  if (remainingRequests !== undefined) switchboard["remainingRequests"] = remainingRequests
  if (remainingTokens !== undefined) switchboard["remainingTokens"] = remainingTokens
  return { response: { status: reply.status, headers: { ...reply.headers } }, metadata: { switchboard } }
}

const metadata = (completion: {
  // A stream chunk may come without an id (tolerant reading, docs/decisions.md).
  readonly id?: string | undefined
  readonly model?: string | undefined
  readonly created?: number | undefined
}): Response.ResponseMetadataPartEncoded => ({
  type: "response-metadata",
  id: completion.id,
  modelId: completion.model,
  timestamp: timestampOf(completion.created)
})

/** `created` (seconds) as an ISO time; none past `Date`'s range (±8.64e15 ms), where `toISOString` throws. */
const timestampOf = (created: number | undefined): string | undefined => {
  if (created === undefined) return undefined
  const date = new Date(created * 1000)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** A model's JSON, by core's `Protocol.parseModelJson`: no `__proto__`, bounded nesting, a bounded and redacted message. */
const parseModel = (origin: Origin, what: string, text: string): Result.Result<unknown, AiError.AiError> =>
  Result.mapError(Protocol.parseModelJson(text), (why) => invalidOutput(origin.site, origin.endpoint, what, `are ${why}`, text))

const parseArguments = (origin: Origin, call: Protocol.ToolCall, reading: Reading): Result.Result<unknown, AiError.AiError> => {
  const { redact } = origin.endpoint
  const what = `the arguments of tool call ${truncate(redact(call.id), 80)} (${truncate(redact(call.function.name), 80)})`
  const parsed = call.function.arguments.trim() === "" ? Result.succeed({}) : parseModel(origin, what, call.function.arguments)
  if (reading.params === undefined || Result.isFailure(parsed)) return parsed
  return Result.mapError(
    reading.params(call.function.name, parsed.success),
    (why) => invalidOutput(origin.site, origin.endpoint, what, `do not match the tool's schema (${why})`, call.function.arguments)
  )
}

/**
 * The text of a structured value, for `effect/ai` to decode: parsed here
 * (a plain `JSON.parse` keeps a `__proto__` key that a decoded record then
 * inherits from), unwrapped, and written again.
 */
const structuredText = (
  origin: Origin,
  text: string,
  { check, read, wrapped }: NonNullable<Reading["structured"]>
): Result.Result<string, AiError.AiError> => {
  const what = "the structured output"
  const parsed = parseModel(origin, what, text)
  const why = check === undefined || Result.isFailure(parsed) ? undefined : check(parsed.success)
  if (why !== undefined) return Result.fail(outputMismatch(origin.site, origin.endpoint, why, text))
  const value = read === undefined || Result.isFailure(parsed)
    ? parsed
    : Result.mapError(read(parsed.success), (why) => invalidOutput(origin.site, origin.endpoint, what, `does not match the schema (${why})`, text))
  return Result.map(value, (value) => {
    const inner = wrapped && typeof value === "object" && value !== null && "value" in value ? value.value : value
    return JSON.stringify(inner) ?? "null"
  })
}

/** The text and tool-call parts of an assistant message. */
const contentParts = (
  origin: Origin,
  message: Protocol.AssistantMessage,
  reading: Reading
): Result.Result<Array<Response.PartEncoded>, AiError.AiError> => {
  const structured = reading.structured
  const calls = message.tool_calls ?? []
  const respond = structured?.callName === undefined
    ? undefined
    : calls.find((call) => call.function.name === structured.callName)
  const parts: Array<Response.PartEncoded> = []
  const text = respond?.function.arguments ?? message.content ?? ""
  if (text !== "") {
    if (structured === undefined) parts.push({ type: "text", text })
    else {
      const value = structuredText(origin, text, structured)
      if (Result.isFailure(value)) return Result.fail(value.failure)
      parts.push({ type: "text", text: value.success })
    }
  }
  for (const call of calls) {
    if (call === respond) continue
    const params = parseArguments(origin, call, reading)
    if (Result.isFailure(params)) return Result.fail(params.failure)
    parts.push({ type: "tool-call", id: call.id, name: call.function.name, params: params.success })
  }
  return Result.succeed(parts)
}

/** The parts of a whole completion: metadata, text, tool calls, finish. */
export const fromCompletion = (
  origin: Origin,
  completion: Protocol.ChatCompletion,
  reading: Reading,
  reply?: ResponseMetadata.ResponseMetadata | undefined
): Result.Result<Array<Response.PartEncoded>, AiError.AiError> => {
  const choice = completion.choices[0]
  if (choice === undefined) {
    return Result.fail(invalidOutput(origin.site, origin.endpoint, "the completion", "has no choices", ""))
  }
  return Result.map(contentParts(origin, choice.message, reading), (content) => [
    metadata(completion),
    ...content,
    { type: "finish", reason: finishReason(choice.finish_reason), usage: usage(completion.usage), ...finishReply(reply) }
  ])
}

interface Ending {
  readonly body: ReadonlyArray<Response.StreamPartEncoded>
  readonly finish: Response.FinishPartEncoded
}

/**
 * Chunks → stream parts as they come, folded by core's `ChatFold` (the fold
 * `Chat.accumulate` uses, with its limit): `response-metadata` first, then
 * `text-start`/`text-delta`, and per call `tool-params-start` (once its id,
 * name and first arguments are in: a name may come in pieces before them)
 * and `tool-params-delta`. The calls themselves, `text-end`, the `-end`s and
 * `finish` come when the stream ends: the usage chunk follows the finish
 * reason, and `effect/ai` resolves calls per emitted chunk.
 */
class Streaming {
  readonly fold: ChatFold.Fold
  first: Protocol.ChatCompletionChunk | undefined
  textStarted = false
  /** The calls of the first choice whose start went out. */
  readonly started = new Set<ChatFold.ToolCallSoFar>()

  constructor(readonly textId: string, maxCharacters: number) {
    this.fold = ChatFold.make({ maxCharacters })
  }

  /** The parts of one chunk, or the error the stream ends with (past the limit). */
  add(chunk: Protocol.ChatCompletionChunk, parts: Array<Response.StreamPartEncoded>): SwitchboardError | undefined {
    if (this.first === undefined) {
      this.first = chunk
      parts.push(metadata(chunk))
    }
    const tooLarge = this.fold.add(chunk)
    if (tooLarge) return tooLarge
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue
      const { content, tool_calls } = choice.delta
      if (content) {
        if (!this.textStarted) parts.push({ type: "text-start", id: this.textId })
        this.textStarted = true
        parts.push({ type: "text-delta", id: this.textId, delta: content })
      }
      if (tool_calls && tool_calls.length > 0) this.callParts(parts, tool_calls)
    }
    return undefined
  }

  /**
   * Params parts for what the fold's calls gained: best effort, the calls
   * themselves come at the end. A call starts once it has an id, a name and
   * some arguments (those so far go with its start); after that each
   * chunk's own fragments follow. Only this chunk's targets are looked at:
   * no other call changed (a walk over every call per chunk was up to
   * 4,096 × 4,096 steps).
   */
  callParts(parts: Array<Response.StreamPartEncoded>, deltas: ReadonlyArray<Protocol.ToolCallDelta>) {
    const targets = this.fold.lastToolCalls(0)
    const startedNow = new Set<ChatFold.ToolCallSoFar>()
    for (const call of targets) {
      if (this.started.has(call) || call.id === undefined || call.name === undefined || call.argumentsLength === 0) continue
      this.started.add(call)
      startedNow.add(call)
      parts.push({ type: "tool-params-start", id: call.id, name: call.name })
      parts.push({ type: "tool-params-delta", id: call.id, delta: call.arguments() })
    }
    for (let p = 0; p < deltas.length; p++) {
      const call = targets[p]
      const fragment = deltas[p]!.function?.arguments
      if (call === undefined || !fragment || startedNow.has(call) || call.id === undefined || !this.started.has(call)) continue
      parts.push({ type: "tool-params-delta", id: call.id, delta: fragment })
    }
  }

  /** The closing parts, from the fold's completion. */
  end(
    origin: Origin,
    reading: Reading,
    reply: ResponseMetadata.ResponseMetadata | undefined
  ): Result.Result<Ending, AiError.AiError | SwitchboardError> {
    return Result.flatMap(this.fold.completion(), (completion): Result.Result<Ending, AiError.AiError | SwitchboardError> => {
      const choice = completion.choices[0]
      const body: Array<Response.StreamPartEncoded> = this.textStarted ? [{ type: "text-end", id: this.textId }] : []
      const calls = choice?.message.tool_calls ?? []
      // The completion's calls are the fold's, in its order.
      const slots = this.fold.toolCalls(0)
      for (const [i, call] of calls.entries()) {
        const params = parseArguments(origin, call, reading)
        if (Result.isFailure(params)) return Result.fail(params.failure)
        if (!this.started.has(slots[i]!)) {
          body.push(
            { type: "tool-params-start", id: call.id, name: call.function.name },
            { type: "tool-params-delta", id: call.id, delta: call.function.arguments }
          )
        }
        body.push({ type: "tool-params-end", id: call.id }, { type: "tool-call", id: call.id, name: call.function.name, params: params.success })
      }
      return Result.succeed({
        body,
        finish: {
          type: "finish",
          reason: finishReason(choice?.finish_reason),
          usage: usage(completion.usage),
          ...finishReply(reply)
        }
      })
    })
  }
}

/**
 * Stream parts from completion chunks, holding at most `maxCharacters`;
 * `onEnd` sees the `finish` part (for telemetry). `effect/ai` streams text
 * only, never structured output. `finish` goes out in a chunk of its own:
 * `effect/ai` runs the tools of each chunk and puts their results after it.
 */
export const fromChunks = <E, R>(
  origin: Origin,
  chunks: Stream.Stream<Protocol.ChatCompletionChunk, E, R>,
  maxCharacters: number,
  reading: Reading,
  onEnd: (finish: Response.FinishPartEncoded, first: Protocol.ChatCompletionChunk | undefined) => void,
  reply: () => ResponseMetadata.ResponseMetadata | undefined = () => undefined
): Stream.Stream<Response.StreamPartEncoded, E | AiError.AiError | SwitchboardError, R> =>
  Stream.suspend(() => {
    const state = new Streaming("text", maxCharacters)
    const parts = Stream.flattenIterable(Stream.mapEffect(chunks, (chunk) => {
      const out: Array<Response.StreamPartEncoded> = []
      // Failing ends the stream, which closes its connection.
      const error = state.add(chunk, out)
      return error ? Effect.fail(error) : Effect.succeed(out)
    }))
    const ending = Effect.map(Effect.suspend(() => Effect.fromResult(state.end(origin, reading, reply()))), (ending) => {
      onEnd(ending.finish, state.first)
      return ending
    })
    return Stream.concat(
      parts,
      Stream.flatMap(Stream.fromEffect(ending), ({ body, finish }) => Stream.concat(Stream.fromIterable(body), Stream.succeed(finish)))
    )
  })
