/**
 * The ranges the chat-completions format gives its numeric request fields,
 * checked on the raw body (the penalties are not in core's schema, and the
 * schema takes any number for the others): a value out of range is a 400
 * naming the field, as the real service answers, not a reply that ignores it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { badRequest } from "./errors.js"
import { Incoming, isRecord } from "./incoming.js"

interface Range {
  readonly field: string
  readonly min: number
  readonly max?: number
  readonly integer?: boolean
}

/** The most choices one request may ask for, as in the format's reference. */
export const maxChoices = 128

const ranges: ReadonlyArray<Range> = [
  { field: "temperature", min: 0, max: 2 },
  { field: "top_p", min: 0, max: 1 },
  { field: "presence_penalty", min: -2, max: 2 },
  { field: "frequency_penalty", min: -2, max: 2 },
  { field: "n", min: 1, max: maxChoices, integer: true },
  { field: "max_tokens", min: 1, integer: true },
  { field: "max_completion_tokens", min: 1, integer: true }
]

const expected = (range: Range) =>
  `${range.integer === true ? "a whole number" : "a number"} ${
    range.max === undefined ? `of at least ${range.min}` : `between ${range.min} and ${range.max}`
  }`

const problem = (range: Range, value: unknown): string | undefined => {
  if (typeof value !== "number" || !Number.isFinite(value)) return `must be ${expected(range)}`
  if (range.integer === true && !Number.isInteger(value)) return `must be ${expected(range)} (got ${value})`
  if (value < range.min || (range.max !== undefined && value > range.max)) return `must be ${expected(range)} (got ${value})`
  return undefined
}

/**
 * An embedding's `dimensions`, at most the model's (1536 for
 * text-embedding-3-small): each feature of a text costs one step per
 * dimension, so `dimensions: 1e8` held the emulator for most of a minute.
 */
const embeddingRanges: ReadonlyArray<Range> = [{ field: "dimensions", min: 1, max: 1536, integer: true }]

/** Fails with the 400 of the first field out of its range. */
const checkRanges = (ranges: ReadonlyArray<Range>) => Effect.flatMap(Incoming, ({ body }) => {
  const value = body._tag === "Json" && isRecord(body.value) ? body.value : {}
  for (const range of ranges) {
    if (value[range.field] === undefined) continue
    const wrong = problem(range, value[range.field])
    if (wrong !== undefined) {
      return Effect.fail(badRequest(`Invalid value for '${range.field}': ${wrong}`, range.field, "invalid_value"))
    }
  }
  return Effect.void
})

/** The chat request's fields out of range: the 400 of the first. */
export const check = checkRanges(ranges)

/** The embeddings request's fields out of range: the 400 of the first. */
export const checkEmbedding = checkRanges(embeddingRanges)
