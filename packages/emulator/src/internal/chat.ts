/**
 * `POST /v1/chat/completions` for chat models: a reply derived only from the
 * request (so the same request always gets the same reply), shaped exactly
 * like the widely used chat-completion format.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import * as Conversation from "./conversation.js"
import type { ApiError } from "./errors.js"
import * as Images from "./images.js"
import * as PromptSchema from "./promptSchema.js"
import * as SchemaValue from "./schemaValue.js"
import { contentText, countWords, truncateWords } from "./text.js"
import * as Tools from "./tools.js"

/**
 * What the model "said", before it is shaped as a completion or a stream.
 *
 * @internal
 */
export interface Reply {
  readonly content: string | null
  readonly toolCalls: ReadonlyArray<Tools.OutgoingCall>
  readonly finishReason: "stop" | "length" | "tool_calls"
  readonly usage: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number }
}

/**
 * @internal
 */
export interface Meta {
  readonly id: string
  readonly created: number
  readonly model: string
}

const closing = "This is a deterministic reply from the Switchboard emulator: the same request always gets the same answer."

const plainText = (messages: Protocol.ChatRequest["messages"]): string => {
  const last = Conversation.lastUserIndex(messages)
  const user = messages[last]
  return [`You said: "${contentText(user?.content)}".`, Images.describe(user, last), closing].filter((s) => s !== "").join(" ")
}

// Counted once per request, however many choices it asks for.
const promptCounts = new WeakMap<Protocol.ChatRequest, number>()

const promptTokens = (request: Protocol.ChatRequest): number => {
  const known = promptCounts.get(request)
  if (known !== undefined) return known
  const count = request.messages.reduce((sum, message) => {
    const calls = message.role === "assistant" ? message.tool_calls ?? [] : []
    const text = [contentText(message.content), ...calls.map((c) => `${c.function.name} ${c.function.arguments}`)].join(" ")
    return sum + countWords(text)
  }, 0)
  promptCounts.set(request, count)
  return count
}

const usage = (request: Protocol.ChatRequest, completion: number): Reply["usage"] => {
  const prompt = promptTokens(request)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

/** The most words a reply may have: the smaller of `max_tokens` and `max_completion_tokens` when both are given. */
const maxWords = (request: Protocol.ChatRequest): number | undefined => {
  const limits = [request.max_tokens, request.max_completion_tokens].filter((n): n is number => n !== undefined)
  return limits.length === 0 ? undefined : Math.min(...limits)
}

/**
 * Most characters of text in one reply, all its choices together, as a
 * model's output is bounded: an echoed 32 MiB prompt times `n: 128` ran the
 * emulator out of memory. Each of `n` choices gets its share.
 */
export const maxReplyCharacters = 1024 * 1024

/** `text` cut to `max` characters, never inside a surrogate pair; `undefined` when it fits. */
const truncateCharacters = (text: string, max: number): string | undefined => {
  if (text.length <= max) return undefined
  const end = max > 0 && (text.charCodeAt(max - 1) & 0xfc00) === 0xd800 ? max - 1 : max
  return text.slice(0, end)
}

/** A text reply with `full` as content, cut to `maxCharacters`, then to `maxWords` words. */
export const textReply = (request: Protocol.ChatRequest, full: string, maxCharacters = maxReplyCharacters): Reply => {
  const short = truncateCharacters(full, maxCharacters)
  const max = maxWords(request)
  const words = max === undefined ? undefined : truncateWords(short ?? full, max)
  const content = words ?? short ?? full
  const cut = words !== undefined || short !== undefined
  return { content, toolCalls: [], finishReason: cut ? "length" : "stop", usage: usage(request, countWords(content)) }
}

/**
 * The text reply in the asked `response_format`: JSON built from the schema
 * (`json_schema`); for `json_object`, JSON built from the schema written in
 * the prompt, or else the text wrapped as `{"reply": …}`; or the text itself.
 */
const formatted = (request: Protocol.ChatRequest, text: string): string => {
  const format = request.response_format
  switch (format?.type) {
    case "json_schema":
      return JSON.stringify(SchemaValue.build(format.json_schema.schema))
    case "json_object": {
      const schema = PromptSchema.find(request.messages)
      return JSON.stringify(schema === undefined ? { reply: text } : SchemaValue.build(schema))
    }
    default:
      return text
  }
}

/**
 * The `n` choices, each worked out from the request once. Plain text from
 * the second choice on says which choice it is, so that a client mixing
 * choices up shows it; JSON and tool calls are the same in every choice.
 */
const choices = (request: Protocol.ChatRequest, n: number): ReadonlyArray<Reply> => {
  const calls = Tools.nextCalls(request)
  if (calls === undefined) {
    const text = Tools.summarizeResults(request.messages) ?? plainText(request.messages)
    const json = request.response_format !== undefined && request.response_format.type !== "text"
    const body = json ? formatted(request, text) : text
    const share = Math.floor(maxReplyCharacters / n)
    return Array.from({ length: n }, (_, index) =>
      textReply(request, json || index === 0 ? body : `(Choice ${index + 1} of ${n}) ${body}`, share))
  }
  const completion = calls.reduce((sum, c) => sum + 1 + countWords(c.arguments.replace(/[{}":,]/g, " ")), 0)
  const reply: Reply = { content: null, toolCalls: calls, finishReason: "tool_calls", usage: usage(request, completion) }
  return Array.from({ length: n }, () => reply)
}

/** The `n` choices for a decoded chat request (images already validated), or the 400 the real service would send. */
export const replies = (request: Protocol.ChatRequest): ReadonlyArray<Reply> | ApiError => {
  const invalid = Conversation.validatePairing(request.messages)
  if (invalid) return invalid
  return choices(request, request.n ?? 1)
}

/** The usage of all choices: the prompt counted once, the completions added up. */
export const totalUsage = (replies: ReadonlyArray<Reply>): Reply["usage"] => {
  const prompt = replies[0]?.usage.prompt_tokens ?? 0
  const completion = replies.reduce((sum, r) => sum + r.usage.completion_tokens, 0)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

/** The non-streamed `chat.completion` object. */
export const completion = (replies: ReadonlyArray<Reply>, meta: Meta) => ({
  id: meta.id,
  object: "chat.completion",
  created: meta.created,
  model: meta.model,
  choices: replies.map((reply, index) => ({
    index,
    message: {
      role: "assistant",
      content: reply.content,
      ...(reply.toolCalls.length > 0
        ? { tool_calls: reply.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) }
        : {})
    },
    finish_reason: reply.finishReason
  })),
  usage: totalUsage(replies)
})
