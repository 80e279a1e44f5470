/**
 * The body `useChat` posts (the AI SDK's `DefaultChatTransport`): `id`,
 * `messages` as UI messages with parts, `trigger`, `messageId`, decoded with
 * `Schema` into the chat messages the service takes, each tool call followed
 * by its result. A body that does not fit fails with `InvalidUiRequest`
 * naming the field, before anything is sent.
 *
 * @since 1.1.0
 */
import * as Issue from "@switchboard/core/internal/issue"
import { formatPath } from "@switchboard/core/internal/path"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { Decision } from "./Agent.js"
import { denial, errorContent } from "./internal/tools.js"

/**
 * A body that is not a UI chat, or one beyond the limits: answered 400 with
 * `{ "error": { "field", "message" } }`.
 *
 * @since 1.1.0
 * @category errors
 */
export class InvalidUiRequest extends Schema.TaggedError<InvalidUiRequest>()("InvalidUiRequest", {
  field: Schema.String,
  message: Schema.String
}) {}

const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
const FilePart = Schema.Struct({ type: Schema.Literal("file"), mediaType: Schema.String, url: Schema.String })
const StepStart = Schema.Struct({ type: Schema.Literal("step-start") })

const toolStates = [
  "input-streaming",
  "input-available",
  "approval-requested",
  "approval-responded",
  "output-available",
  "output-error",
  "output-denied"
] as const

const toolFields = {
  toolCallId: Schema.String,
  state: Schema.Literals(toolStates),
  input: Schema.optionalKey(Schema.Unknown),
  output: Schema.optionalKey(Schema.Unknown),
  errorText: Schema.optionalKey(Schema.String),
  approval: Schema.optionalKey(Schema.Struct({
    id: Schema.String,
    approved: Schema.optionalKey(Schema.Boolean),
    reason: Schema.optionalKey(Schema.String)
  }))
}
const ToolPart = Schema.Struct({ type: Schema.TemplateLiteral(["tool-", Schema.String]), ...toolFields })
const DynamicToolPart = Schema.Struct({ type: Schema.Literal("dynamic-tool"), toolName: Schema.String, ...toolFields })
/** Parts a model never reads back: reasoning, sources, `data-*`. */
const IgnoredPart = Schema.Struct({
  type: Schema.Union([
    Schema.Literals(["reasoning", "source-url", "source-document"]),
    Schema.TemplateLiteral(["data-", Schema.String])
  ])
})

const UiPart = Schema.Union([TextPart, FilePart, StepStart, ToolPart, DynamicToolPart, IgnoredPart])
type UiPart = typeof UiPart.Type
type AnyToolPart = typeof ToolPart.Type | typeof DynamicToolPart.Type

/**
 * A UI message as `useChat` sends it: an id, a role and its parts.
 *
 * @since 1.1.0
 * @category schemas
 */
export const UiMessage = Schema.Struct({
  id: Schema.String,
  role: Schema.Literals(["system", "user", "assistant"]),
  parts: Schema.Array(UiPart),
  metadata: Schema.optionalKey(Schema.Unknown)
})

/**
 * A UI message as `useChat` sends it: an id, a role and its parts.
 *
 * @since 1.1.0
 * @category models
 */
export type UiMessage = typeof UiMessage.Type

/**
 * The body as `useChat` sends it (other keys, from its `body` option, are
 * kept out).
 *
 * @since 1.1.0
 * @category schemas
 */
export const UiChatRequest = Schema.Struct({
  id: Schema.String,
  messages: Schema.Array(UiMessage),
  trigger: Schema.optionalKey(Schema.Literals(["submit-message", "regenerate-message"])),
  messageId: Schema.optionalKey(Schema.String)
})

/**
 * The body as `useChat` sends it: the chat id, its messages, the trigger.
 *
 * @since 1.1.0
 * @category models
 */
export type UiChatRequest = typeof UiChatRequest.Type

/**
 * Limits checked before the body is decoded. Defaults: 4 MiB, 1,000
 * messages.
 *
 * @since 1.1.0
 * @category models
 */
export interface Limits {
  readonly maxBodyBytes?: number | undefined
  readonly maxMessages?: number | undefined
}

/**
 * The limits of a body when none are given: 4 MiB and 1,000 messages.
 *
 * @since 1.1.0
 * @category constants
 */
export const defaultLimits = { maxBodyBytes: 4 * 1024 * 1024, maxMessages: 1000 } as const

/**
 * A decoded body: the conversation as chat messages, and, when its last
 * message is the assistant's with approval responses, the decisions by
 * approval id (`continues` is then that message's id).
 *
 * @since 1.1.0
 * @category models
 */
export interface Decoded {
  readonly chatId: string
  readonly trigger: "submit-message" | "regenerate-message"
  readonly messages: ReadonlyArray<Protocol.Message>
  readonly decisions: Readonly<Record<string, Decision>>
  /** The field of each decision, for a 409 that names it. */
  readonly decisionFields: Readonly<Record<string, string>>
  readonly continues: string | undefined
}

type UserContent = Extract<Protocol.Message, { readonly role: "user" }>["content"]

const invalid = (field: string, message: string) => Result.fail(new InvalidUiRequest({ field, message }))

const decodeBody = Schema.decodeUnknownResult(UiChatRequest)

/**
 * Parses and decodes a body already read as text (its size checked by the
 * caller against `maxBodyBytes`).
 *
 * @since 1.1.0
 * @category decoding
 */
export const decode = (text: string, limits: Limits = {}): Result.Result<Decoded, InvalidUiRequest> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return invalid("body", "is not JSON")
  }
  // Counted before decoding, so 10,000 messages cost one look at `length`.
  const messages = typeof json === "object" && json !== null ? (json as { messages?: unknown }).messages : undefined
  const maxMessages = limits.maxMessages ?? defaultLimits.maxMessages
  if (Array.isArray(messages) && messages.length > maxMessages) {
    return invalid("messages", `has ${messages.length} messages, more than the limit of ${maxMessages}`)
  }
  // Every failure, with its input, so the 400 names the deepest field and what it got.
  const body = decodeBody(json, { errors: "all", reportInput: true })
  if (Result.isFailure(body)) {
    const leaf = Issue.leafOf(body.failure.issue)
    return invalid(formatPath(leaf.path) || "body", leaf.reason)
  }
  return toMessages(body.success)
}

const textOf = (parts: ReadonlyArray<UiPart>) =>
  parts.flatMap((part) => (part.type === "text" ? [(part as typeof TextPart.Type).text] : [])).join("")

const isTool = (part: UiPart): part is AnyToolPart => part.type === "dynamic-tool" || part.type.startsWith("tool-")

const toolName = (part: AnyToolPart) => part.type === "dynamic-tool" ? (part as typeof DynamicToolPart.Type).toolName : part.type.slice(5)

/** What the model reads as the call's result, as the agent would have sent it. */
const resultContent = (part: AnyToolPart): string | undefined => {
  switch (part.state) {
    case "output-available":
      return typeof part.output === "string" ? part.output : JSON.stringify(part.output ?? null)
    case "output-error":
      return errorContent(part.errorText ?? "the tool failed")
    case "output-denied":
      return denial(toolName(part))
    default:
      return undefined
  }
}

const userContent = (message: UiMessage, at: string): Result.Result<UserContent, InvalidUiRequest> => {
  const content: Array<Protocol.ContentPart> = []
  for (const [j, part] of message.parts.entries()) {
    if (part.type === "text") content.push({ type: "text", text: (part as typeof TextPart.Type).text })
    else if (part.type === "file") {
      const file = part as typeof FilePart.Type
      if (!file.mediaType.startsWith("image/")) return invalid(`${at}.parts[${j}].mediaType`, "only images can be sent")
      content.push({ type: "image_url", image_url: { url: file.url } })
    }
  }
  if (content.every((part) => part.type === "text")) return Result.succeed(textOf(message.parts))
  return Result.succeed(content as unknown as UserContent)
}

/** One assistant UI message: an assistant message per step, each followed by its calls' results. */
const assistantMessages = (
  message: UiMessage,
  at: string,
  last: boolean,
  seen: Set<string>,
  decided: { readonly decisions: Map<string, Decision>; readonly fields: Map<string, string> }
): Result.Result<Array<Protocol.Message>, InvalidUiRequest> => {
  const out: Array<Protocol.Message> = []
  const steps: Array<Array<[UiPart, number]>> = [[]]
  for (const [j, part] of message.parts.entries()) {
    if (part.type === "step-start") {
      if (steps.at(-1)!.length > 0) steps.push([])
    } else steps.at(-1)!.push([part, j])
  }
  for (const [s, step] of steps.entries()) {
    const text = textOf(step.map(([part]) => part))
    const calls: Array<Protocol.ToolCall> = []
    const results: Array<Protocol.Message> = []
    for (const [part, j] of step) {
      if (!isTool(part)) continue
      const field = `${at}.parts[${j}]`
      if (seen.has(part.toolCallId)) return invalid(`${field}.toolCallId`, `repeats the call id ${part.toolCallId}`)
      seen.add(part.toolCallId)
      if (!("input" in part) && part.state !== "input-streaming") {
        return invalid(`${field}.input`, "is missing: a tool result needs its call")
      }
      calls.push({ id: part.toolCallId, type: "function", function: { name: toolName(part), arguments: JSON.stringify(part.input ?? {}) } })
      const content = resultContent(part)
      if (content !== undefined) {
        results.push({ role: "tool", tool_call_id: part.toolCallId, content })
        continue
      }
      const open = last && s === steps.length - 1
      if (part.state === "approval-responded" && open) {
        const approval = part.approval
        if (approval?.approved === undefined) return invalid(`${field}.approval.approved`, "is missing")
        // Keyed by the approval id the server sent: the agent's, bound to the call and its arguments.
        decided.decisions.set(approval.id, approval.reason === undefined ? { approved: approval.approved } : { approved: approval.approved, reason: approval.reason })
        decided.fields.set(approval.id, `${field}.approval`)
      } else if (!open) {
        // A call left open before a later turn (the user typed instead of
        // deciding): the model reads it as denied, as the service needs every
        // call answered.
        results.push({ role: "tool", tool_call_id: part.toolCallId, content: denial(toolName(part)) })
      }
    }
    if (text === "" && calls.length === 0) continue
    out.push({ role: "assistant", content: text === "" ? null : text, ...(calls.length > 0 ? { tool_calls: calls } : {}) })
    out.push(...results)
  }
  return Result.succeed(out)
}

const toMessages = (body: UiChatRequest): Result.Result<Decoded, InvalidUiRequest> => {
  const messages: Array<Protocol.Message> = []
  const seen = new Set<string>()
  const decided = { decisions: new Map<string, Decision>(), fields: new Map<string, string>() }
  const lastIndex = body.messages.length - 1
  for (const [i, message] of body.messages.entries()) {
    const at = `messages[${i}]`
    if (message.role === "assistant") {
      const converted = assistantMessages(message, at, i === lastIndex, seen, decided)
      if (Result.isFailure(converted)) return Result.fail(converted.failure)
      messages.push(...converted.success)
    } else if (message.role === "user") {
      const content = userContent(message, at)
      if (Result.isFailure(content)) return Result.fail(content.failure)
      messages.push({ role: "user", content: content.success })
    } else {
      messages.push({ role: "system", content: textOf(message.parts) })
    }
  }
  const last = body.messages.at(-1)
  const continues = last?.role === "assistant" && decided.decisions.size > 0 ? last.id : undefined
  if (messages.length === 0) return invalid("messages", "has no message to answer")
  return Result.succeed({
    chatId: body.id,
    trigger: body.trigger ?? "submit-message",
    messages,
    decisions: Object.fromEntries(decided.decisions),
    decisionFields: Object.fromEntries(decided.fields),
    continues
  })
}
