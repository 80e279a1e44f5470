/**
 * Reading a conversation: where the current turn starts, which tool calls
 * were made and answered, and the pairing rule the real service enforces
 * (every call of an assistant message answered by the `tool` messages that
 * directly follow it, and nothing else).
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import { ApiError, badRequest } from "./errors.js"
import { contentText } from "./text.js"

type Message = Protocol.ChatRequest["messages"][number]

/** Index of the last user message, or -1. */
export const lastUserIndex = (messages: ReadonlyArray<Message>): number =>
  messages.reduce((found, message, i) => message.role === "user" ? i : found, -1)

const unanswered = (pending: Map<string, string>) =>
  badRequest(
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. Missing responses for: ${
      [...pending.keys()].join(", ")
    }`,
    [...pending.values()][0] ?? null,
    "missing_tool_response"
  )

/** The first break of the pairing rule as a 400, or `undefined`. */
export const validatePairing = (messages: ReadonlyArray<Message>): ApiError | undefined => {
  // call id → the param naming that call, for the error when it goes unanswered
  let pending = new Map<string, string>()
  for (const [i, message] of messages.entries()) {
    if (message.role === "tool") {
      if (!pending.delete(message.tool_call_id)) {
        const param = `messages[${i}].tool_call_id`
        return badRequest(
          `Invalid value for '${param}': '${message.tool_call_id}' does not answer an unanswered tool call of the preceding assistant message`,
          param,
          "invalid_tool_call_id"
        )
      }
      continue
    }
    if (pending.size > 0) return unanswered(pending)
    pending = new Map(
      message.role === "assistant"
        ? (message.tool_calls ?? []).map((call, j) => [call.id, `messages[${i}].tool_calls[${j}]`] as const)
        : []
    )
  }
  return pending.size > 0 ? unanswered(pending) : undefined
}

/**
 * @internal
 */
export interface ToolResult {
  readonly callId: string
  readonly name: string
  readonly content: string
}

/** Every tool result from index `from` on, with the name of the call it answers. */
export const toolResults = (messages: ReadonlyArray<Message>, from = 0): ReadonlyArray<ToolResult> => {
  const names = new Map<string, string>()
  const results: Array<ToolResult> = []
  for (const message of messages.slice(Math.max(0, from))) {
    if (message.role === "assistant") message.tool_calls?.forEach((call) => names.set(call.id, call.function.name))
    if (message.role === "tool") {
      results.push({ callId: message.tool_call_id, name: names.get(message.tool_call_id) ?? "tool", content: contentText(message.content) })
    }
  }
  return results
}

/** The assistant messages carrying tool calls from index `from` on, in order. */
export const toolTurns = (messages: ReadonlyArray<Message>, from: number): ReadonlyArray<ReadonlyArray<Protocol.ToolCall>> =>
  messages.slice(Math.max(0, from)).flatMap((message) =>
    message.role === "assistant" && message.tool_calls && message.tool_calls.length > 0 ? [message.tool_calls] : []
  )
