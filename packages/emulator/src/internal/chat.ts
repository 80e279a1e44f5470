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

const promptTokens = (request: Protocol.ChatRequest): number =>
  request.messages.reduce((sum, message) => {
    const calls = message.role === "assistant" ? message.tool_calls ?? [] : []
    const text = [contentText(message.content), ...calls.map((c) => `${c.function.name} ${c.function.arguments}`)].join(" ")
    return sum + countWords(text)
  }, 0)

const usage = (request: Protocol.ChatRequest, completion: number): Reply["usage"] => {
  const prompt = promptTokens(request)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

/** A text reply with `full` as content, cut to `max_tokens` words. */
export const textReply = (request: Protocol.ChatRequest, full: string): Reply => {
  const cut = request.max_tokens === undefined ? undefined : truncateWords(full, request.max_tokens)
  const content = cut ?? full
  return { content, toolCalls: [], finishReason: cut === undefined ? "stop" : "length", usage: usage(request, countWords(content)) }
}

/**
 * The text reply in the asked `response_format`: JSON built from the schema
 * (`json_schema`), the text wrapped as `{"reply": …}` (`json_object`), or the
 * text itself.
 */
const formatted = (request: Protocol.ChatRequest, text: string): string => {
  const format = request.response_format
  switch (format?.type) {
    case "json_schema":
      return JSON.stringify(SchemaValue.build(format.json_schema.schema))
    case "json_object":
      return JSON.stringify({ reply: text })
    default:
      return text
  }
}

/** The reply to a decoded chat request (images already validated), or the 400 the real service would send. */
export const reply = (request: Protocol.ChatRequest): Reply | ApiError => {
  const invalid = Conversation.validatePairing(request.messages)
  if (invalid) return invalid
  const calls = Tools.nextCalls(request)
  if (calls === undefined) return textReply(request, formatted(request, Tools.summarizeResults(request.messages) ?? plainText(request.messages)))
  const completion = calls.reduce((sum, c) => sum + 1 + countWords(c.arguments.replace(/[{}":,]/g, " ")), 0)
  return { content: null, toolCalls: calls, finishReason: "tool_calls", usage: usage(request, completion) }
}

/** The non-streamed `chat.completion` object. */
export const completion = (reply: Reply, meta: Meta) => ({
  id: meta.id,
  object: "chat.completion",
  created: meta.created,
  model: meta.model,
  choices: [{
    index: 0,
    message: {
      role: "assistant",
      content: reply.content,
      ...(reply.toolCalls.length > 0
        ? { tool_calls: reply.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) }
        : {})
    },
    finish_reason: reply.finishReason
  }],
  usage: reply.usage
})
