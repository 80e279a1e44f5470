/**
 * What goes on a span and a metric, by the OpenTelemetry semantic
 * conventions for generative AI (`docs/observability.md`): span names, the
 * attributes known at start and those read from the reply. Pure functions:
 * `Transport` owns when spans start and end, and calls these.
 */
import * as Result from "effect/Result"
import * as ChatFold from "../ChatFold.js"
import type * as Protocol from "../Protocol.js"
import { defaultMaxResponseBytes } from "../SwitchboardConfig.js"

/** The value of `gen_ai.provider.name` on everything the SDK records. */
export const providerName = "switchboard"

/**
 * `gen_ai.operation.name`. `chat` and `embeddings` are the conventions'
 * own; the others name the service's other calls in the same style.
 */
export type Operation = "chat" | "embeddings" | "moderations" | "list_models" | "task_status"

/** `gen_ai.output.type`: what a media call asked for. */
export type OutputType = "image" | "video"

/** Span attributes: what `Effect.withSpan` and `Span.attribute` take. */
export type Attributes = Record<string, unknown>

/** `server.address` and `server.port` of the configured base URL. */
export interface Server {
  readonly address: string
  readonly port: number
}

// Core is built without DOM or Node typings (see SwitchboardConfig).
declare const URL: new(input: string) => { readonly protocol: string; readonly hostname: string; readonly port: string }

/** The host and port of a base URL; the port is the scheme's when the URL has none. */
export const serverOf = (apiUrl: string): Server => {
  const url = new URL(apiUrl)
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)
  // An IPv6 host comes bracketed; the attribute holds the address alone.
  return { address: url.hostname.replace(/^\[(.*)\]$/, "$1"), port }
}

/** What a call is before any reply: set by each capability, read by `Transport`. */
export interface Start {
  readonly operation: Operation
  /** `gen_ai.request.model`, also the second word of the span name. */
  readonly model?: string | undefined
  /** Request parameters, set at span start (samplers read them). */
  readonly request?: Attributes | undefined
  /** The request's message contents; recorded only when the user opts in. */
  readonly input?: (() => Attributes) | undefined
}

/** What one call to the service is, for its span and metrics. */
export interface Call<A> extends Start {
  /** What a successful reply says: response attributes and token usage. */
  readonly reply?: ((value: A) => Reply) | undefined
  /** The reply's message contents; recorded only when the user opts in. */
  readonly output?: ((value: A) => Attributes) | undefined
}

/** A streamed call: its start, and how to gather what its elements say. */
export interface StreamCall<A> extends Start {
  /** A new gatherer for one stream; `keepText` when contents are recorded. */
  readonly facts: (keepText: boolean) => Facts<A>
}

/** What a reply adds to its call's span, and the tokens it used. */
export interface Reply {
  readonly attributes: Attributes
  readonly usage?: Usage | undefined
}

/** Tokens of one call, as the conventions count them. */
export interface Usage {
  readonly input?: number | undefined
  readonly output?: number | undefined
}

/** `{operation} {model}`, or the operation alone for calls without a model. */
export const spanName = (operation: string, target: string | undefined): string =>
  target === undefined || target === "" ? operation : `${operation} ${target}`

/** The attributes every call starts with, before its request parameters. */
export const startAttributes = (operation: string, model: string | undefined, server: Server): Attributes => {
  const attributes: Attributes = {
    "gen_ai.operation.name": operation,
    "gen_ai.provider.name": providerName,
    "server.address": server.address,
    "server.port": server.port
  }
  if (model !== undefined) attributes["gen_ai.request.model"] = model
  return attributes
}

/** The parameters a chat request sets, under their conventional names; absent ones are left out. */
export const chatRequest = (request: Protocol.ChatRequest, stream: boolean, output?: OutputType): Attributes => {
  const attributes: Attributes = { "gen_ai.request.stream": stream }
  // max_completion_tokens is today's name for max_tokens; given both, the smaller bounds the reply.
  const maxTokens = request.max_completion_tokens === undefined || request.max_tokens === undefined
    ? request.max_completion_tokens ?? request.max_tokens
    : Math.min(request.max_tokens, request.max_completion_tokens)
  if (maxTokens !== undefined) attributes["gen_ai.request.max_tokens"] = maxTokens
  if (request.temperature !== undefined) attributes["gen_ai.request.temperature"] = request.temperature
  if (request.top_p !== undefined) attributes["gen_ai.request.top_p"] = request.top_p
  if (request.seed !== undefined) attributes["gen_ai.request.seed"] = request.seed
  if (request.n !== undefined && request.n !== 1) attributes["gen_ai.request.choice.count"] = request.n
  if (request.stop !== undefined) {
    attributes["gen_ai.request.stop_sequences"] = typeof request.stop === "string" ? [request.stop] : request.stop
  }
  const format = request.response_format?.type
  if (output !== undefined) attributes["gen_ai.output.type"] = output
  else if (format === "json_object" || format === "json_schema") attributes["gen_ai.output.type"] = "json"
  return attributes
}

/** The start of a chat call (`output`: what a media call asks for); its messages recorded only on opt-in. */
export const chatStart = (
  request: Protocol.ChatRequest,
  stream: boolean,
  output?: OutputType
): Start => ({
  operation: "chat",
  model: request.model,
  request: chatRequest(request, stream, output),
  input: () => inputMessages(request)
})

/** A streamed chat call: its start, and its chunks' facts. */
// Object.assign onto the fresh start rather than a spread: see observe.ts
// (the spread doubled the memory an open stream holds).
export const chatStream = (request: Protocol.ChatRequest): StreamCall<Protocol.ChatCompletionChunk> =>
  Object.assign(chatStart(request, true), {
    facts: (keepText: boolean) => new ChunkFacts(keepText)
  })

/** A whole chat call: its start, and what its completion says. */
export const chat = (request: Protocol.ChatRequest, output?: OutputType): Call<Protocol.ChatCompletion> =>
  Object.assign(chatStart(request, false, output), { reply: chatReply, output: outputMessages })

/** An embeddings request's parameters. */
export const embeddingsRequest = (request: { readonly dimensions?: number | undefined }): Attributes =>
  request.dimensions === undefined ? {} : { "gen_ai.embeddings.dimension.count": request.dimensions }

const finishReasons = (choices: ReadonlyArray<{ readonly finish_reason?: string | null | undefined }>) => {
  const reasons: Array<string> = []
  for (const choice of choices) if (choice.finish_reason) reasons.push(choice.finish_reason)
  return reasons
}

/** Response id and model, finish reasons and usage of a completion. */
export const chatReply = (completion: Protocol.ChatCompletion): Reply =>
  reply(completion.id, completion.model, finishReasons(completion.choices), completion.usage ?? undefined)

/** The response model and input tokens of an embeddings reply. */
export const embeddingsReply = (response: Protocol.EmbeddingResponse): Reply =>
  reply(undefined, response.model, [], response.usage === undefined ? undefined : { prompt_tokens: response.usage.prompt_tokens })

const reply = (
  id: string | undefined,
  model: string | undefined,
  reasons: ReadonlyArray<string>,
  usage: { readonly prompt_tokens: number; readonly completion_tokens?: number } | undefined
): Reply => {
  const attributes: Attributes = {}
  if (id) attributes["gen_ai.response.id"] = id
  if (model) attributes["gen_ai.response.model"] = model
  if (reasons.length > 0) attributes["gen_ai.response.finish_reasons"] = reasons
  if (usage === undefined) return { attributes }
  attributes["gen_ai.usage.input_tokens"] = usage.prompt_tokens
  if (usage.completion_tokens !== undefined) attributes["gen_ai.usage.output_tokens"] = usage.completion_tokens
  return { attributes, usage: { input: usage.prompt_tokens, output: usage.completion_tokens } }
}

/** What a stream's elements say, gathered as they arrive, for its span when it ends. */
export interface Facts<A> {
  /** One element, `sinceStartMillis` after the request was sent. */
  readonly add: (element: A, sinceStartMillis: number) => void
  /** Milliseconds from the request to the first element, once there was one. */
  readonly firstMillis: () => number | undefined
  readonly reply: () => Reply
  /** The message contents streamed so far; recorded only when the user opts in. */
  readonly output: () => Attributes
}

/**
 * The facts of a streamed completion, gathered chunk by chunk by `ChatFold`
 * (the fold every path uses): the first id and model, every finish reason,
 * the last usage, and when the first chunk came, up to `ChatFold.maxOpened`
 * choices (the span keeps what came before). When contents are recorded,
 * a second fold keeps the message (text and tool calls) up to the fold's
 * limit, and stops gathering there: the span gets what came before it.
 */
export class ChunkFacts implements Facts<Protocol.ChatCompletionChunk> {
  private readonly facts = ChatFold.make({ maxCharacters: 0, content: false })
  /** The facts opened more than `ChatFold.maxOpened` choices: later chunks are not folded in, so they stay bounded. */
  private full = false
  /** The message contents, kept only when recorded, until they pass the limit. */
  private contents: ChatFold.Fold | undefined
  /** Milliseconds from the request to the first chunk. */
  firstChunkMillis: number | undefined

  constructor(keepText: boolean) {
    this.contents = keepText ? ChatFold.make({ maxCharacters: defaultMaxResponseBytes }) : undefined
  }

  readonly firstMillis = (): number | undefined => this.firstChunkMillis

  readonly add = (chunk: Protocol.ChatCompletionChunk, sinceStartMillis: number): void => {
    this.firstChunkMillis ??= sinceStartMillis
    if (!this.full && this.facts.add(chunk) !== undefined) this.full = true
    if (this.contents !== undefined && this.contents.add(chunk) !== undefined) this.contents = undefined
  }

  /** `gen_ai.output.messages` of what streamed so far: text and tool calls; none past the limit. */
  readonly output = (): Attributes =>
    this.contents === undefined || this.contents.chunks() === 0 ?
      {} :
      Result.match(this.contents.completion(), { onFailure: () => ({}), onSuccess: outputMessages })

  /** What the chunks so far add to the span; time to first chunk in seconds, as the conventions measure it. */
  readonly reply = (): Reply => {
    const facts = this.facts
    const result = reply(facts.id(), facts.model(), facts.finishReasons(), facts.usage())
    if (this.firstChunkMillis === undefined) return result
    return {
      ...result,
      attributes: { ...result.attributes, "gen_ai.response.time_to_first_chunk": this.firstChunkMillis / 1000 }
    }
  }
}

/** `error.type`: the error's tag, which names its class (`RateLimitError`, `TimeoutError`, …). */
export const errorType = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : "_OTHER"

// ---------------------------------------------------------------------------
// Message contents (only when the user opts in: `Telemetry.CaptureContent`)
// ---------------------------------------------------------------------------

type Part =
  | { readonly type: "text"; readonly content: string }
  | { readonly type: "uri"; readonly modality: "image"; readonly uri: string }
  | { readonly type: "tool_call"; readonly id: string; readonly name: string; readonly arguments: string }
  | { readonly type: "tool_call_response"; readonly id: string; readonly response: string }

/** A data URL is the image itself: its kind and size say enough. */
const imageUri = (url: string): string => {
  if (!url.startsWith("data:")) return url
  const comma = url.indexOf(",")
  return `${url.slice(0, comma < 0 ? 40 : comma)},… (${url.length} characters)`
}

const contentParts = (content: Protocol.Message["content"]): Array<Part> => {
  if (content === undefined || content === null) return []
  if (typeof content === "string") return [{ type: "text", content }]
  return content.map((part): Part =>
    part.type === "text" ? { type: "text", content: part.text } : { type: "uri", modality: "image", uri: imageUri(part.image_url.url) }
  )
}

const toolCallParts = (calls: ReadonlyArray<Protocol.ToolCall> | undefined): Array<Part> =>
  (calls ?? []).map((call) => ({ type: "tool_call", id: call.id, name: call.function.name, arguments: call.function.arguments }))

const messageOf = (message: Protocol.Message) => {
  if (message.role === "tool") {
    const text = contentParts(message.content).map((part) => (part.type === "text" ? part.content : "")).join("")
    return { role: "tool", parts: [{ type: "tool_call_response", id: message.tool_call_id, response: text }] }
  }
  if (message.role === "assistant") {
    return { role: "assistant", parts: [...contentParts(message.content), ...toolCallParts(message.tool_calls)] }
  }
  return { role: message.role, parts: contentParts(message.content) }
}

/** `gen_ai.input.messages`: the request's messages as the conventions' JSON. */
export const inputMessages = (request: Protocol.ChatRequest): Attributes => ({
  "gen_ai.input.messages": JSON.stringify(request.messages.map(messageOf))
})

/** `gen_ai.output.messages`: the reply's choices as the conventions' JSON. */
export const outputMessages = (completion: Protocol.ChatCompletion): Attributes => ({
  "gen_ai.output.messages": JSON.stringify(completion.choices.map((choice) => ({
    ...messageOf(choice.message),
    finish_reason: choice.finish_reason ?? ""
  })))
})
