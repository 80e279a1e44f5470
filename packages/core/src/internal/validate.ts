/**
 * Request validation: a request schema is compiled once into an encoder whose
 * failures become an `InvalidRequestError` naming the first offending field.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { InvalidRequestError } from "../SwitchboardError.js"
import { formatPath } from "./issue.js"


/**
 * Picks the most specific issue: the longest path, and among those one with a
 * message written for the field over a generic "Expected …" (a union reports
 * one issue per member).
 */
const specificity = (issue: ParseResult.ArrayFormatterIssue) =>
  issue.path.length * 2 + (issue.message.startsWith("Expected ") ? 0 : 1)

const firstIssue = (error: ParseResult.ParseError): InvalidRequestError => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const best = issues.reduce((a, b) => (specificity(b) > specificity(a) ? b : a), issues[0]!)
  const field = formatPath(best.path) || "request"
  const message = best._tag === "Missing" && best.message === "is missing" ? "is required" : best.message
  return new InvalidRequestError({ field, message: `${field} ${message}` })
}

// `encoder` and `plainDecoder` first ask `Schema.is`, several times cheaper
// than encoding or decoding, and pass a value it accepts on as it is. That is
// right only for schemas whose encoding (decoding) of a value their type
// accepts is that same value: no transformation but a default, like
// ToolCall's `type`. Property tests hold each schema compiled so to it.

/** Compiles a request `schema` into a validating encoder. */
export const encoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const is = Schema.is(schema)
  const encode = Schema.encodeUnknownEither(schema, { errors: "all", onExcessProperty: "preserve" })
  return (value: unknown): Either.Either<I, InvalidRequestError> =>
    is(value) ? Either.right(value as unknown as I) : Either.mapLeft(encode(value), firstIssue)
}

/** Compiles `schema` into a tolerant decoder (unknown fields kept). */
export const decoder = <A, I>(schema: Schema.Schema<A, I>) =>
  Schema.decodeUnknownEither(schema, { onExcessProperty: "preserve" })

/** `decoder`, with the `Schema.is` shortcut: for response schemas on a hot path. */
export const plainDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const is = Schema.is(schema)
  const decode = decoder(schema)
  return (value: unknown): Either.Either<A, ParseResult.ParseError> => is(value) ? Either.right(value) : decode(value)
}
