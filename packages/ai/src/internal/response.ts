/**
 * Chat completions → `@effect/ai` response parts, and completion chunks →
 * stream parts.
 *
 * @internal
 */
import * as AiError from "@effect/ai/AiError"
import type * as Response from "@effect/ai/Response"
import * as Chat from "@switchboard/core/Chat"
import type * as Protocol from "@switchboard/core/Protocol"
import type { SwitchboardError } from "@switchboard/core/SwitchboardError"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Site } from "./errors.js"

/**
 * How tool calls come back: as `tool-call` parts, or (structured output by a
 * forced tool) the call named `respond` as the text `@effect/ai` decodes.
 */
export interface Reading {
  /** Turns the `respond` call's arguments (or the content) into the text of the value. */
  readonly structured?: {
    readonly callName: string | undefined
    readonly unwrap: (text: string) => string
  } | undefined
}

const finishReasons: Readonly<Record<string, Response.FinishReason>> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool-calls",
  function_call: "tool-calls",
  content_filter: "content-filter"
}

/** The service's `finish_reason` → `@effect/ai`'s; `null` is `unknown`, anything else `other`. */
export const finishReason = (reason: string | null | undefined): Response.FinishReason =>
  reason == null ? "unknown" : finishReasons[reason] ?? "other"

/** `usage` → `@effect/ai`'s; fields are `undefined` when the service sent none. */
export const usage = (usage: Protocol.Usage | null | undefined): typeof Response.Usage.Encoded => ({
  inputTokens: usage?.prompt_tokens,
  outputTokens: usage?.completion_tokens,
  totalTokens: usage?.total_tokens
})

const metadata = (completion: {
  // A stream chunk may come without an id (tolerant reading, docs/decisions.md).
  readonly id?: string | undefined
  readonly model?: string | undefined
  readonly created?: number | undefined
}): Response.ResponseMetadataPartEncoded => ({
  type: "response-metadata",
  id: completion.id,
  modelId: completion.model,
  timestamp: completion.created === undefined ? undefined : new Date(completion.created * 1000).toISOString()
})

const parseArguments = (site: Site, call: Protocol.ToolCall): Effect.Effect<unknown, AiError.AiError> =>
  Effect.try({
    try: () => JSON.parse(call.function.arguments === "" ? "{}" : call.function.arguments) as unknown,
    catch: (cause) =>
      new AiError.MalformedOutput({
        ...site,
        description: `the arguments of tool call ${call.id} (${call.function.name}) are not JSON: ${call.function.arguments}`,
        cause
      })
  })

/** The text and tool-call parts of an assistant message. */
const contentParts = (
  site: Site,
  message: Protocol.AssistantMessage,
  reading: Reading
): Effect.Effect<Array<Response.PartEncoded>, AiError.AiError> => {
  const structured = reading.structured
  const calls = message.tool_calls ?? []
  const respond = structured?.callName === undefined
    ? undefined
    : calls.find((call) => call.function.name === structured.callName)
  const text = respond?.function.arguments ?? message.content ?? ""
  const parts: Array<Response.PartEncoded> = text === "" ? [] : [{ type: "text", text: structured ? structured.unwrap(text) : text }]
  return Effect.map(
    Effect.forEach(calls.filter((call) => call !== respond), (call) =>
      Effect.map(parseArguments(site, call), (params): Response.PartEncoded => ({
        type: "tool-call",
        id: call.id,
        name: call.function.name,
        params
      }))),
    (callParts) => [...parts, ...callParts]
  )
}

/** The parts of a whole completion: metadata, text, tool calls, finish. */
export const fromCompletion = (
  site: Site,
  completion: Protocol.ChatCompletion,
  reading: Reading
): Effect.Effect<Array<Response.PartEncoded>, AiError.AiError> => {
  const choice = completion.choices[0]
  if (choice === undefined) {
    return Effect.fail(new AiError.MalformedOutput({ ...site, description: "the completion has no choices" }))
  }
  return Effect.map(contentParts(site, choice.message, reading), (content) => [
    metadata(completion),
    ...content,
    { type: "finish", reason: finishReason(choice.finish_reason), usage: usage(completion.usage) }
  ])
}

/**
 * Folds chunks into stream parts as they come: `response-metadata` first,
 * then `text-start`/`text-delta`, `tool-params-start`/`-delta` per call.
 * The calls themselves, `text-end`, the `-end`s and `finish` come when the
 * stream ends: the usage chunk follows the finish reason, and `@effect/ai`
 * resolves calls per emitted chunk.
 */
interface Ending {
  readonly body: ReadonlyArray<Response.StreamPartEncoded>
  readonly finish: Response.FinishPartEncoded
}

class Streaming {
  readonly chunks: Array<Protocol.ChatCompletionChunk> = []
  textStarted = false
  /** Calls whose `tool-params-start` went out, by id. */
  readonly started = new Set<string>()
  /** Deltas by index (or id, or position), until the call's id and name are known. */
  readonly pending = new Map<string, { id?: string | undefined; name?: string | undefined; args: Array<string> }>()

  constructor(readonly textId: string) {}

  add(chunk: Protocol.ChatCompletionChunk): Array<Response.StreamPartEncoded> {
    const parts: Array<Response.StreamPartEncoded> = this.chunks.length === 0 ? [metadata(chunk)] : []
    this.chunks.push(chunk)
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue
      const { content, tool_calls } = choice.delta
      if (content) {
        if (!this.textStarted) parts.push({ type: "text-start", id: this.textId })
        this.textStarted = true
        parts.push({ type: "text-delta", id: this.textId, delta: content })
      }
      tool_calls?.forEach((delta, position) => parts.push(...this.callDelta(delta, position)))
    }
    return parts
  }

  /** Params parts for a tool-call delta: best effort, the calls themselves come from `Chat.accumulate`. */
  callDelta(delta: Protocol.ToolCallDelta, position: number): Array<Response.StreamPartEncoded> {
    const key = delta.index !== undefined ? `i${delta.index}` : delta.id !== undefined ? `id${delta.id}` : `p${position}`
    const slot = this.pending.get(key) ?? { args: [] }
    this.pending.set(key, slot)
    slot.id ??= delta.id
    slot.name ??= delta.function?.name
    if (delta.function?.arguments) slot.args.push(delta.function.arguments)
    if (slot.id === undefined || slot.name === undefined) return []
    const parts: Array<Response.StreamPartEncoded> = []
    if (!this.started.has(slot.id)) {
      this.started.add(slot.id)
      parts.push({ type: "tool-params-start", id: slot.id, name: slot.name })
    }
    for (const args of slot.args) parts.push({ type: "tool-params-delta", id: slot.id, delta: args })
    slot.args = []
    return parts
  }

  /** The closing parts, from the chunks folded as a non-streamed completion would be. */
  end(site: Site): Effect.Effect<Ending, AiError.AiError | SwitchboardError> {
    return Effect.flatMap(Chat.accumulate(Stream.fromIterable(this.chunks)), (completion) => {
      const choice = completion.choices[0]
      const parts: Array<Response.StreamPartEncoded> = this.textStarted ? [{ type: "text-end", id: this.textId }] : []
      const calls = choice?.message.tool_calls ?? []
      return Effect.map(
        Effect.forEach(calls, (call) =>
          Effect.map(parseArguments(site, call), (params): Array<Response.StreamPartEncoded> => [
            ...(this.started.has(call.id) ? [] : [
              { type: "tool-params-start", id: call.id, name: call.function.name } as const,
              { type: "tool-params-delta", id: call.id, delta: call.function.arguments } as const
            ]),
            { type: "tool-params-end", id: call.id },
            { type: "tool-call", id: call.id, name: call.function.name, params }
          ])),
        (callParts): Ending => ({
          body: [...parts, ...callParts.flat()],
          finish: { type: "finish", reason: finishReason(choice?.finish_reason), usage: usage(completion.usage) }
        })
      )
    })
  }
}

/**
 * Stream parts from completion chunks; `onEnd` sees the `finish` part (for
 * telemetry). `@effect/ai` streams text only, never structured output.
 * `finish` goes out in a chunk of its own: `@effect/ai` runs the tools of
 * each chunk and puts their results after it.
 */
export const fromChunks = <E, R>(
  site: Site,
  chunks: Stream.Stream<Protocol.ChatCompletionChunk, E, R>,
  onEnd: (finish: Response.FinishPartEncoded, first: Protocol.ChatCompletionChunk | undefined) => void
): Stream.Stream<Response.StreamPartEncoded, E | AiError.AiError | SwitchboardError, R> =>
  Stream.suspend(() => {
    const state = new Streaming("text")
    const ending = Effect.tap(Effect.suspend(() => state.end(site)), ({ finish }) => onEnd(finish, state.chunks[0]))
    return Stream.concat(
      Stream.mapConcat(chunks, (chunk) => state.add(chunk)),
      Stream.flatMap(Stream.fromEffect(ending), ({ body, finish }) => Stream.concat(Stream.fromIterable(body), Stream.succeed(finish)))
    )
  })
