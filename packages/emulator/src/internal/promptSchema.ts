/**
 * A JSON Schema written into the prompt: what clients without structured
 * outputs send along with `response_format: {"type": "json_object"}` ("answer
 * with JSON following this schema: {…}"). The last one in the conversation
 * is the one to follow; an example schema in format instructions comes first.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import { isRecord } from "./incoming.js"
import { contentText } from "./text.js"

type JsonSchema = Readonly<Record<string, unknown>>

/** Whether a parsed object reads as a JSON Schema rather than as data. */
const isSchema = (value: unknown): value is JsonSchema =>
  isRecord(value) && (
    isRecord(value["properties"]) || typeof value["$schema"] === "string" ||
    (value["type"] === "array" && isRecord(value["items"]))
  )

/**
 * The outermost balanced `{…}` spans of `text`, in one pass: braces inside
 * JSON strings are skipped once a span is open (prose outside may hold stray
 * quotes), so a huge prompt costs linear time.
 */
const spans = (text: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let depth = 0
  let start = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === "\"") inString = false
    } else if (c === "\"" && depth > 0) {
      inString = true
    } else if (c === "{") {
      if (depth++ === 0) start = i
    } else if (c === "}" && depth > 0) {
      if (--depth === 0) out.push(text.slice(start, i + 1))
    }
  }
  return out
}

const parse = (span: string): unknown => {
  try {
    return JSON.parse(span) as unknown
  } catch {
    return undefined
  }
}

/** The last JSON Schema written in the conversation's messages, or `undefined`. */
export const find = (messages: Protocol.ChatRequest["messages"]): JsonSchema | undefined => {
  for (const message of [...messages].reverse()) {
    if (message.role === "assistant" || message.role === "tool") continue
    const found = spans(contentText(message.content)).map(parse).filter(isSchema).at(-1)
    if (found !== undefined) return found
  }
  return undefined
}
