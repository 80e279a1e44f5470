/**
 * `@effect/ai`'s `Prompt` → chat messages: system text, user text and
 * images, assistant text and tool calls, and the tool results of each
 * assistant message in its call order.
 *
 * @internal
 */
import * as AiError from "@effect/ai/AiError"
import type * as Prompt from "@effect/ai/Prompt"
import * as Attachment from "@switchboard/core/Attachment"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Effect from "effect/Effect"
import type { Site } from "./errors.js"

const malformed = (site: Site, description: string, cause?: unknown) =>
  new AiError.MalformedInput({ ...site, description, ...(cause === undefined ? {} : { cause }) })

/** An image file part → an `image_url` part, through core's `Attachment` (URL, data URI or bytes). */
const imagePart = (site: Site, part: Prompt.FilePart): Effect.Effect<Protocol.ContentPart, AiError.AiError> => {
  if (!part.mediaType.startsWith("image/")) {
    return Effect.fail(malformed(site, `file parts must be images (got ${part.mediaType})`))
  }
  const { data } = part
  // A `URL` is told apart without the global (the build has no DOM or Node types).
  const attachment = data instanceof Uint8Array
    ? Attachment.fromBytes(data, { mediaType: part.mediaType })
    : typeof data !== "string"
    ? Attachment.fromUrl(String(data))
    : /^(https?:|data:)/i.test(data)
    ? Attachment.fromUrl(data)
    : Attachment.fromUrl(`data:${part.mediaType};base64,${data}`)
  return Effect.mapBoth(attachment, {
    onFailure: (error) => malformed(site, error.message, error),
    onSuccess: Attachment.toContentPart
  })
}

const userMessage = (site: Site, message: Prompt.UserMessage): Effect.Effect<Protocol.Message, AiError.AiError> =>
  Effect.map(
    Effect.forEach(message.content, (part): Effect.Effect<Protocol.ContentPart, AiError.AiError> =>
      part.type === "text" ? Effect.succeed({ type: "text", text: part.text }) : imagePart(site, part)),
    (parts): Protocol.Message => {
      const only = parts[0]
      return parts.length === 1 && only?.type === "text"
        ? { role: "user", content: only.text }
        : { role: "user", content: parts as [Protocol.ContentPart, ...Array<Protocol.ContentPart>] }
    }
  )

const assistantMessage = (message: Prompt.AssistantMessage): Protocol.Message => {
  const text = message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")
  const calls = message.content.flatMap((part): Array<Protocol.ToolCall> =>
    part.type === "tool-call" && !part.providerExecuted
      ? [{ id: part.id, type: "function", function: { name: part.name, arguments: JSON.stringify(part.params ?? {}) } }]
      : []
  )
  return {
    role: "assistant",
    content: text === "" && calls.length > 0 ? null : text,
    ...(calls.length > 0 ? { tool_calls: calls } : {})
  }
}

const toolMessage = (part: Prompt.ToolResultPart): Protocol.Message => ({
  role: "tool",
  tool_call_id: part.id,
  content: typeof part.result === "string" ? part.result : JSON.stringify(part.result ?? null)
})

/**
 * Tool results right after an assistant message, sorted into its call order
 * (the service pairs them by id, but some models read them by position).
 */
const inCallOrder = (messages: Array<Protocol.Message>): Array<Protocol.Message> => {
  const out: Array<Protocol.Message> = []
  let order = new Map<string, number>()
  let results: Array<Protocol.Message & { readonly role: "tool" }> = []
  const flush = () => {
    results.sort((a, b) => (order.get(a.tool_call_id) ?? Infinity) - (order.get(b.tool_call_id) ?? Infinity))
    out.push(...results)
    results = []
  }
  for (const message of messages) {
    if (message.role === "tool") {
      results.push(message)
      continue
    }
    flush()
    if (message.role === "assistant") order = new Map((message.tool_calls ?? []).map((call, i) => [call.id, i]))
    out.push(message)
  }
  flush()
  return out
}

/** The chat messages of a prompt. */
export const toMessages = (site: Site, prompt: Prompt.Prompt): Effect.Effect<Array<Protocol.Message>, AiError.AiError> =>
  Effect.map(
    Effect.forEach(prompt.content, (message): Effect.Effect<ReadonlyArray<Protocol.Message>, AiError.AiError> => {
      switch (message.role) {
        case "system":
          return Effect.succeed([{ role: "system", content: message.content }])
        case "user":
          return Effect.map(userMessage(site, message), (m) => [m])
        case "assistant":
          return Effect.succeed([assistantMessage(message)])
        case "tool":
          return Effect.succeed(message.content.map(toolMessage))
      }
    }),
    (groups) => inCallOrder(groups.flat())
  )
