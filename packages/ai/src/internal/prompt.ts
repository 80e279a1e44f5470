/**
 * `effect/ai`'s `Prompt` → chat messages: system text, user text and
 * images, assistant text and tool calls, and the tool results of each
 * assistant message in its call order. Approval parts stay out: the model
 * sees a call and, once `LanguageModel` has resolved it, its result.
 *
 * @internal
 */
import * as Attachment from "@switchboard/core/Attachment"
import type * as Protocol from "@switchboard/core/Protocol"
import type * as AiError from "effect/ai/AiError"
import type * as Prompt from "effect/ai/Prompt"
import * as Effect from "effect/Effect"
import { invalidRequest, type Site } from "./errors.js"

declare module "effect/ai/Prompt" {
  /** Switchboard's options of a file part. */
  export interface FilePartOptions extends ProviderOptions {
    readonly switchboard?: {
      /** The `image_url.detail` of an image: `auto`, `low` or `high`. */
      readonly imageDetail?: Attachment.Detail | undefined
    } | undefined
  }
}

/** An image file part → an `image_url` part, through core's `Attachment` (URL, data URI or bytes). */
const imagePart = (site: Site, part: Prompt.FilePart): Effect.Effect<Protocol.ContentPart, AiError.AiError> => {
  if (!part.mediaType.startsWith("image/")) {
    return Effect.fail(invalidRequest(site, "prompt", `file parts must be images (got ${part.mediaType})`))
  }
  const { data } = part
  const detail = part.options.switchboard?.imageDetail
  // A `URL` is told apart without the global (the build has no DOM or Node types).
  const attachment = data instanceof Uint8Array
    ? Attachment.fromBytes(data, { mediaType: part.mediaType, detail })
    : typeof data !== "string"
    ? Attachment.fromUrl(String(data), { detail })
    : /^(https?:|data:)/i.test(data)
    ? Attachment.fromUrl(data, { detail })
    : Attachment.fromUrl(`data:${part.mediaType};base64,${data}`, { detail })
  return Effect.mapBoth(attachment, {
    onFailure: (error) => invalidRequest(site, "prompt", error.message),
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

/** Text and the calls the framework runs; reasoning, files and what the provider ran have no chat-completions form. */
const assistantMessage = (message: Prompt.AssistantMessage): Protocol.AssistantMessage => {
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

/** A result as the model reads it: its `modelOutput` text when the tool gave one, else the result as JSON. */
const toolMessage = (site: Site, part: Prompt.ToolResultPart): Effect.Effect<Protocol.Message, AiError.AiError> => {
  const output = part.modelOutput
  if (output !== undefined && output.some((p) => p.type !== "text")) {
    return Effect.fail(invalidRequest(site, "prompt", `the result of tool call ${part.id}: only text is sent as a tool's model output`))
  }
  const content = output !== undefined
    ? output.map((p) => (p.type === "text" ? p.text : "")).join("")
    : typeof part.result === "string"
    ? part.result
    : JSON.stringify(part.result ?? null)
  return Effect.succeed({ role: "tool", tool_call_id: part.id, content })
}

/**
 * Tool results right after an assistant message, sorted into its call order
 * (the service pairs them by id, but some models read them by position).
 */
const inCallOrder = (messages: ReadonlyArray<Protocol.Message>): Array<Protocol.Message> => {
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

const messagesOf = (site: Site, message: Prompt.Message): Effect.Effect<ReadonlyArray<Protocol.Message>, AiError.AiError> => {
  switch (message.role) {
    case "system":
      return Effect.succeed([{ role: "system", content: message.content }])
    case "user":
      return Effect.map(userMessage(site, message), (m) => [m])
    case "assistant": {
      const m = assistantMessage(message)
      // An assistant message of approval requests alone says nothing to the model.
      return Effect.succeed(m.content === "" && m.tool_calls === undefined ? [] : [m])
    }
    case "tool":
      return Effect.forEach(
        message.content.filter((part): part is Prompt.ToolResultPart => part.type === "tool-result"),
        (part) => toolMessage(site, part)
      )
  }
}

/** The chat messages of a prompt. */
export const toMessages = (site: Site, prompt: Prompt.Prompt): Effect.Effect<Array<Protocol.Message>, AiError.AiError> =>
  Effect.map(Effect.forEach(prompt.content, (message) => messagesOf(site, message)), (groups) => inCallOrder(groups.flat()))
