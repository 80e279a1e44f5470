/**
 * Hand-written checks for the hot paths: cheaper than a compiled
 * `Schema.is`, and conservative (true only where the schema agrees, which
 * property tests hold them to). A value they reject still goes through the
 * schema, which has the last word.
 */
import type { ChatCompletion, ChatRequest, EmbeddingResponse } from "../Protocol.js"

export type Loose = { readonly [key: string]: unknown }

/** An object that is not an array or `null` (`Schema.Struct`'s own test). */
export const isObject = (u: unknown): u is Loose => typeof u === "object" && u !== null && !Array.isArray(u)

/** Absent, `undefined`, or of `type` (`Schema.optional`). */
export const isOptional = (u: unknown, type: "string" | "number") => u === undefined || typeof u === type

export const isNullableString = (u: unknown) => u === undefined || u === null || typeof u === "string"

/** Every element a string of at least one character (`Schema.Array(NonEmptyString)`). */
export const isNonEmptyStrings = (u: ReadonlyArray<unknown>): boolean => {
  for (let i = 0; i < u.length; i++) {
    const s = u[i]
    if (typeof s !== "string" || s.length === 0) return false
  }
  return true
}

/** An array of numbers (`Protocol.Vector`). */
export const isNumbers = (u: unknown): u is ReadonlyArray<number> => {
  if (!Array.isArray(u)) return false
  for (let i = 0; i < u.length; i++) if (typeof u[i] !== "number") return false
  return true
}

/** A token count as `Protocol.Usage` takes it: finite and not negative (NaN fails `>= 0`). */
const isCount = (u: unknown): boolean => typeof u === "number" && u >= 0 && u !== Infinity

const isEmbeddingItem = (u: unknown): boolean =>
  isObject(u) && isOptional(u.object, "string") && typeof u.index === "number" && isNumbers(u.embedding)

/** `Schema.is(Protocol.EmbeddingResponse)`, by hand. */
export const isPlainEmbeddingResponse = (u: unknown): u is EmbeddingResponse =>
  isObject(u) && isOptional(u.object, "string") && isOptional(u.model, "string") && Array.isArray(u.data) &&
  u.data.every(isEmbeddingItem) &&
  (u.usage === undefined ||
    (isObject(u.usage) && isCount(u.usage.prompt_tokens) && isCount(u.usage.total_tokens)))

/** `null`, or of `type`. */
const isNullOr = (u: unknown, type: "string") => u === null || typeof u === type

const isToolCall = (u: unknown): boolean =>
  isObject(u) && typeof u.id === "string" && u.type === "function" && isObject(u.function) &&
  typeof u.function.name === "string" && typeof u.function.arguments === "string"

const isReplyMessage = (u: unknown): boolean =>
  isObject(u) && u.role === "assistant" && (u.content === undefined || isNullOr(u.content, "string")) &&
  (u.refusal === undefined || isNullOr(u.refusal, "string")) && isOptional(u.name, "string") &&
  (u.tool_calls === undefined || (Array.isArray(u.tool_calls) && u.tool_calls.every(isToolCall)))

const isChoice = (u: unknown): boolean =>
  isObject(u) && typeof u.index === "number" && isNullOr(u.finish_reason, "string") && isReplyMessage(u.message)

/** `Protocol.Usage`, absent or `null` included, by hand (a completion's and a chunk's). */
export const isUsage = (u: unknown): boolean =>
  u === undefined || u === null ||
  (isObject(u) && isCount(u.prompt_tokens) && isCount(u.completion_tokens) && isCount(u.total_tokens))

/**
 * `Schema.is(Protocol.ChatCompletion)`, by hand: what a reply is when the
 * service sent every field the type requires (a choice's `index` and
 * `finish_reason`, the message's `role`, the three token counts).
 */
export const isPlainChatCompletion = (u: unknown): u is ChatCompletion =>
  isObject(u) && typeof u.id === "string" && isOptional(u.object, "string") && isOptional(u.created, "number") &&
  isOptional(u.model, "string") && Array.isArray(u.choices) && u.choices.every(isChoice) && isUsage(u.usage)

/** Every element, holes included (a caller's array may have them), passes `check`. */
const all = (u: ReadonlyArray<unknown>, check: (item: unknown) => boolean): boolean => {
  for (let i = 0; i < u.length; i++) if (!check(u[i])) return false
  return true
}

const isPositiveInt = (u: unknown) => u === undefined || (typeof u === "number" && Number.isSafeInteger(u) && u > 0)

const isOptionalBoolean = (u: unknown) => u === undefined || typeof u === "boolean"

/** A message of text: system, developer or user with a string, or an assistant's without tool calls. */
const isTextMessage = (u: unknown): boolean => {
  if (!isObject(u) || !isOptional(u.name, "string")) return false
  switch (u.role) {
    case "system":
    case "developer":
    case "user":
      return typeof u.content === "string"
    case "assistant":
      return (u.content === undefined || isNullOr(u.content, "string")) && u.tool_calls === undefined &&
        (u.refusal === undefined || isNullOr(u.refusal, "string"))
    default:
      return false
  }
}

/**
 * `Schema.is(Protocol.ChatRequest)`, by hand, for the common request: text
 * messages, and of the other fields only the scalar ones, `stop` and
 * `stream_options`. Tools, tool messages, image parts and the formats are
 * left to the schema (its cross-field rules are about them).
 */
export const isPlainChatRequest = (u: unknown): u is ChatRequest =>
  isObject(u) && typeof u.model === "string" && u.model.length > 0 &&
  Array.isArray(u.messages) && u.messages.length > 0 && all(u.messages, isTextMessage) &&
  isPositiveInt(u.max_tokens) && isPositiveInt(u.max_completion_tokens) && isPositiveInt(u.n) &&
  isOptionalBoolean(u.stream) && isOptionalBoolean(u.parallel_tool_calls) &&
  isOptional(u.temperature, "number") && isOptional(u.top_p, "number") && isOptional(u.seed, "number") &&
  isOptional(u.user, "string") &&
  (u.stream_options === undefined || (isObject(u.stream_options) && isOptionalBoolean(u.stream_options.include_usage))) &&
  (u.stop === undefined || typeof u.stop === "string" ||
    (Array.isArray(u.stop) && all(u.stop, (s) => typeof s === "string"))) &&
  u.tools === undefined && u.tool_choice === undefined && u.response_format === undefined &&
  u.size === undefined && u.quality === undefined && u.style === undefined
