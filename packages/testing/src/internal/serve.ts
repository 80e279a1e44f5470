/**
 * A step → the reply the service would send for one call: a JSON body for a
 * whole reply, server-sent event payloads for a stream (chunked as the
 * service chunks: the role, the text a word at a time, each tool call's name
 * then its arguments in pieces, the finish reason, the usage when asked,
 * `[DONE]`). Pure, and nothing here is Node's.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import type * as Reply from "../Reply.js"

/** What goes back on the wire. */
export interface Served {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The whole body, for a call that does not stream (or an error). */
  readonly body: string
  /** The events' payloads, for a stream with a 2xx status. */
  readonly events: ReadonlyArray<string> | undefined
}

/** A step that cannot answer the call: why. */
export interface Mismatch {
  readonly _tag: "Mismatch"
  readonly reason: string
}

type Answer = Exclude<Reply.Step, { readonly _tag: "Respond" }>

const json = { "content-type": "application/json" }
const sse = { "content-type": "text/event-stream" }

/** The path after `/v1` (`/chat/completions`), whatever the base URL's own path. */
export const pathOf = (url: string): string => {
  const pathname = new URL(url).pathname
  const at = pathname.indexOf("/v1/")
  return at === -1 ? pathname : pathname.slice(at + 3)
}

/** A request's body, parsed: JSON as a value, anything else as its text. */
export const requestBody = (text: string | undefined): unknown => {
  if (text === undefined) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The kind of call a path is, by its end (the base URL may have any prefix). */
export type Kind = "chat" | "embeddings" | "moderations" | "models" | "status" | "other"

export const kindOf = (path: string): Kind =>
  path.endsWith("/chat/completions") ? "chat" :
  path.endsWith("/chat/task/status") ? "status" :
  path.endsWith("/embeddings") ? "embeddings" :
  path.endsWith("/moderations") ? "moderations" :
  path.endsWith("/models") ? "models" :
  "other"

const answers: Record<Answer["_tag"], ReadonlyArray<Kind>> = {
  Text: ["chat"],
  ToolCalls: ["chat"],
  Refusal: ["chat"],
  Image: ["chat"],
  Video: ["chat"],
  Embeddings: ["embeddings"],
  Moderation: ["moderations"],
  Models: ["models"],
  Error: ["chat", "embeddings", "moderations", "models", "status", "other"]
}

const describeKind: Record<Kind, string> = {
  chat: "a chat completion",
  embeddings: "an embeddings call",
  moderations: "a moderation call",
  models: "the model list",
  status: "a video status poll",
  other: "an unknown endpoint"
}

const stepName: Record<Answer["_tag"], string> = {
  Text: "a text step",
  ToolCalls: "a tool-call step",
  Refusal: "a refusal step",
  Image: "an image step",
  Video: "a video step",
  Embeddings: "an embeddings step",
  Moderation: "a moderation step",
  Models: "a model-list step",
  Error: "an error step"
}

const mismatch = (reason: string): Mismatch => ({ _tag: "Mismatch", reason })

/** The call's fields a reply needs. */
export interface CallInfo {
  readonly index: number
  readonly kind: Kind
  readonly request: unknown
  readonly chat: Protocol.ChatRequest | undefined
  readonly streamed: boolean
  readonly created: number
}

/** The step's reply to the call, or why it cannot be one. */
export const serve = (step: Answer, call: CallInfo): Served | Mismatch => {
  if (!answers[step._tag].includes(call.kind)) {
    return mismatch(`${stepName[step._tag]} cannot answer ${describeKind[call.kind]}`)
  }
  switch (step._tag) {
    case "Error":
      return {
        status: step.status,
        headers: { ...json, ...lowerCase(step.headers) },
        body: typeof step.body === "string" ? step.body : JSON.stringify(step.body),
        events: undefined
      }
    case "Embeddings":
      return embeddings(step.vectors, call.request)
    case "Moderation":
      return whole(moderation(step, call.request))
    case "Models":
      return whole({ object: "list", data: step.ids.map((id) => ({ id, object: "model", created: 0, owned_by: "scripted" })) })
    default:
      return chat(step, call)
  }
}

const lowerCase = (headers: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))

const whole = (value: unknown): Served => ({ status: 200, headers: json, body: JSON.stringify(value), events: undefined })

const inputsOf = (request: unknown): ReadonlyArray<string> => {
  const input = (request as { readonly input?: unknown } | undefined)?.input
  return typeof input === "string" ? [input] : Array.isArray(input) ? input.map(String) : []
}

const embeddings = (vectors: ReadonlyArray<ReadonlyArray<number>> | number, request: unknown): Served | Mismatch => {
  const inputs = inputsOf(request)
  if (typeof vectors !== "number" && vectors.length !== inputs.length) {
    return mismatch(`the embeddings step has ${vectors.length} vectors for ${inputs.length} inputs`)
  }
  const data = inputs.map((input, index) => ({
    object: "embedding",
    index,
    embedding: typeof vectors === "number" ? vectorOf(input, vectors) : vectors[index]!
  }))
  const model = (request as { readonly model?: unknown } | undefined)?.model
  const tokens = inputs.reduce((sum, input) => sum + words(input).length, 0)
  return whole({ object: "list", model, data, usage: { prompt_tokens: tokens, total_tokens: tokens } })
}

/** A unit vector from the text: the same text, the same vector. */
const vectorOf = (text: string, dimensions: number): ReadonlyArray<number> => {
  let seed = 2166136261
  for (let i = 0; i < text.length; i++) seed = Math.imul(seed ^ text.charCodeAt(i), 16777619) >>> 0
  const raw = Array.from({ length: dimensions }, () => {
    seed = Math.imul(seed ^ (seed >>> 15), 2246822519) >>> 0
    return seed / 4294967296 - 0.5
  })
  const norm = Math.sqrt(raw.reduce((sum, x) => sum + x * x, 0)) || 1
  return raw.map((x) => x / norm)
}

const moderation = (step: Extract<Answer, { _tag: "Moderation" }>, request: unknown) => ({
  id: "modr-scripted",
  model: "scripted",
  results: inputsOf(request).map(() => ({
    flagged: step.flagged,
    categories: Object.fromEntries(Object.entries(step.scores).map(([name, score]) => [name, step.flagged && score >= 0.5])),
    category_scores: step.scores
  }))
})

/** `text` in word-sized pieces that join back to it. */
const words = (text: string): ReadonlyArray<string> => text.match(/\s*\S+\s*/g) ?? (text === "" ? [] : [text])

/** `text` in pieces of at most `size` characters. */
const pieces = (text: string, size: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

type Message = {
  role: "assistant"
  content: string | null
  tool_calls?: Array<Protocol.ToolCall>
  refusal?: string
}

const offeredTools = (request: Protocol.ChatRequest | undefined): ReadonlyArray<string> =>
  (request?.tools ?? []).map((tool) => tool.function.name)

const chat = (step: Extract<Answer, { _tag: "Text" | "ToolCalls" | "Refusal" | "Image" | "Video" }>, call: CallInfo): Served | Mismatch => {
  const options: Reply.ChatOptions = step.options
  let message: Message
  let finish = "stop"
  switch (step._tag) {
    case "Text":
      message = { role: "assistant", content: step.content }
      break
    case "Image":
      message = { role: "assistant", content: step.urls.map((url, i) => `![image ${i + 1}](${url})`).join("\n") }
      break
    case "Video":
      message = { role: "assistant", content: "" }
      break
    case "Refusal":
      // Content "" as a stream folds it (`Chat.accumulate`), so both ways agree.
      message = { role: "assistant", content: "", refusal: step.refusal }
      break
    case "ToolCalls": {
      const offered = offeredTools(call.chat)
      const unknown = step.calls.find((c) => !offered.includes(c.name))
      if (unknown !== undefined) {
        return mismatch(
          `the step calls tool "${unknown.name}", which the request does not offer (${
            offered.length === 0 ? "it offers none" : `it offers ${offered.join(", ")}`
          })`
        )
      }
      if (call.chat?.tool_choice === "none") return mismatch(`the step calls tools, but the request says tool_choice "none"`)
      message = {
        role: "assistant",
        content: step.content ?? null,
        tool_calls: step.calls.map((c, i) => ({
          id: c.id ?? `call_${call.index}_${i}`,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) }
        }))
      }
      finish = "tool_calls"
      break
    }
  }
  const model = options.model ?? call.chat?.model ?? "scripted"
  const id = step._tag === "Video" ? step.taskId ?? `task_${call.index}` : `chatcmpl-scripted-${call.index}`
  const usage = options.usage === undefined ? undefined : {
    prompt_tokens: options.usage.prompt_tokens,
    completion_tokens: options.usage.completion_tokens,
    total_tokens: options.usage.total_tokens ?? options.usage.prompt_tokens + options.usage.completion_tokens
  }
  const meta = { id, object: "chat.completion", created: call.created, model }
  const finishReason = options.finishReason ?? finish
  if (!call.streamed) {
    return whole({
      ...meta,
      choices: [{ index: 0, message, finish_reason: finishReason }],
      ...(usage === undefined ? {} : { usage })
    })
  }
  const includeUsage = call.chat?.stream_options?.include_usage === true
  return { status: 200, headers: sse, body: "", events: chunks(meta, message, finishReason, includeUsage ? usage : undefined) }
}

const chunks = (
  meta: { readonly id: string; readonly created: number; readonly model: string },
  message: Message,
  finishReason: string,
  usage: Protocol.Usage | undefined
): ReadonlyArray<string> => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({
      id: meta.id,
      object: "chat.completion.chunk",
      created: meta.created,
      model: meta.model,
      choices: [{ index: 0, delta, finish_reason: finish }]
    })
  const out = [chunk({ role: "assistant", content: message.content === null ? null : "" })]
  for (const piece of words(message.content ?? "")) out.push(chunk({ content: piece }))
  if (message.refusal !== undefined) for (const piece of words(message.refusal)) out.push(chunk({ refusal: piece }))
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }))
    for (const piece of pieces(call.function.arguments, 16)) out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
  }
  out.push(chunk({}, finishReason))
  if (usage !== undefined) {
    out.push(JSON.stringify({ id: meta.id, object: "chat.completion.chunk", created: meta.created, model: meta.model, choices: [], usage }))
  }
  out.push("[DONE]")
  return out
}

/** A video task's status reply. */
export const taskStatus = (taskId: string, status: Reply.TaskStatus): Served =>
  whole(
    typeof status === "string" ?
      { task_id: taskId, status, ...(status === "succeed" ? { video_url: `https://video.invalid/${taskId}.mp4` } : {}) } :
      { task_id: taskId, ...status }
  )
