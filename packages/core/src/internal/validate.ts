/**
 * Request validation and reply decoding: a schema is compiled once into a
 * function that returns a `Result`. A request's failure is an
 * `InvalidRequestError` naming the first offending field; a reply's is the
 * schema's issue, which `Issue.describe` puts in one line (`Transport`'s
 * and the stream's `decode` take these functions).
 */
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import { InvalidRequestError } from "../SwitchboardError.js"
import { leafOf } from "./issue.js"
import { formatPath } from "./path.js"

const firstIssue = (issue: SchemaIssue.Issue): InvalidRequestError => {
  const leaf = leafOf(issue)
  const field = formatPath(leaf.path) || "request"
  const message = leaf.reason === "is missing" ? "is required" : leaf.reason
  return new InvalidRequestError({ field, message: `${field} ${message}` })
}

// The input is reported on an issue only to name its kind (`got null`):
// `Issue.kindOf` never prints more than a short string.
const parseOptions = { errors: "all", reportInput: true } as const

// `encoder` and `plainDecoder` first ask `Schema.is`, and pass a value it
// accepts on as it is. That is right only for schemas whose encoding
// (decoding) of a value their type accepts is that same value: no
// transformation but a default, like ToolCall's `type`. Property tests hold
// each schema compiled so to it. For `plainDecoder` it is speed (several
// times cheaper than decoding). For `encoder` it is also what sends a
// request's unknown fields (a gateway's extensions) on: Effect 4's encoding
// drops them, and on Effect 4 it gains no speed (docs/performance.md).

/**
 * How deep a request may nest. Far beyond any real message or tool schema;
 * deeper values would overflow the stack of `JSON.stringify` (20,000 levels)
 * or of Effect's error formatting (about 2,000).
 */
export const maxRequestDepth = 128

interface Frame {
  readonly value: unknown
  readonly key: PropertyKey | undefined
  readonly parent: Frame | undefined
  readonly depth: number
  /** Set on the frame that leaves an object: it is no longer an ancestor. */
  readonly leaving?: object
  /** The value is already what `toJSON` returned: JSON calls it once. */
  readonly converted?: boolean
}

const pathOf = (frame: Frame | undefined): Array<PropertyKey> => {
  const path: Array<PropertyKey> = []
  for (let f = frame; f !== undefined && f.key !== undefined; f = f.parent) path.unshift(f.key)
  return path
}

/**
 * The first thing in a request that JSON cannot carry as the caller meant
 * it: nesting past `maxRequestDepth`, a cycle, a `BigInt`, a number that is
 * not finite (JSON would send `null`), or a `toJSON` that throws. Walked
 * with an explicit stack, so no value can overflow it.
 */
export const jsonProblem = (value: unknown): InvalidRequestError | undefined =>
  plainJson(value, 0) ? undefined : problemOf(value)

/**
 * Whether `value` is plain JSON: finite numbers, no `BigInt`, no `toJSON`,
 * objects nested less than `maxRequestDepth` deep (so no cycle either). The
 * common case, checked by recursion bounded by that depth and without a
 * frame per value; anything else is left to `problemOf` to name.
 */
const plainJson = (value: unknown, depth: number): boolean => {
  if (typeof value === "number") return Number.isFinite(value)
  if (typeof value !== "object" || value === null) return typeof value !== "bigint"
  if (depth >= maxRequestDepth || typeof (value as { toJSON?: unknown }).toJSON === "function") return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!plainJson(value[i], depth + 1)) return false
    return true
  }
  for (const key in value) {
    if (Object.hasOwn(value, key) && !plainJson((value as Record<string, unknown>)[key], depth + 1)) return false
  }
  return true
}

/** `jsonProblem`'s walk: the first problem, with its path. */
const problemOf = (value: unknown): InvalidRequestError | undefined => {
  const ancestors = new Set<object>()
  const stack: Array<Frame> = [{ value, key: undefined, parent: undefined, depth: 0 }]
  const problem = (frame: Frame, message: string) => {
    const field = formatPath(pathOf(frame)) || "request"
    return new InvalidRequestError({ field, message: `${field} ${message}` })
  }
  while (stack.length > 0) {
    const frame = stack.pop()!
    if (frame.leaving !== undefined) {
      ancestors.delete(frame.leaving)
      continue
    }
    let current = frame.value
    if (typeof current === "number" && !Number.isFinite(current)) return problem(frame, "must be a finite number")
    if (typeof current === "bigint") return problem(frame, "is a BigInt, which JSON cannot carry")
    if (typeof current !== "object" || current === null) continue
    if (frame.converted !== true && typeof (current as { toJSON?: unknown }).toJSON === "function") {
      try {
        current = (current as { toJSON: () => unknown }).toJSON()
      } catch (e) {
        return problem(frame, `cannot be turned into JSON: its toJSON threw (${e instanceof Error ? e.message : "a non-error"})`)
      }
      stack.push({ ...frame, value: current, converted: true })
      continue
    }
    if (ancestors.has(current)) return problem(frame, "is circular: it contains itself")
    if (frame.depth >= maxRequestDepth) return problem(frame, `nests deeper than ${maxRequestDepth} levels`)
    ancestors.add(current)
    stack.push({ value: undefined, key: undefined, parent: undefined, depth: 0, leaving: current })
    const depth = frame.depth + 1
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], key: i, parent: frame, depth })
    } else {
      const keys = Object.keys(current)
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push({ value: (current as Record<string, unknown>)[keys[i]!], key: keys[i]!, parent: frame, depth })
      }
    }
  }
  return undefined
}

/**
 * Compiles a request `schema` into a validating encoder. What JSON cannot
 * carry is refused first (`jsonProblem`), so nothing after it meets a cycle
 * or a value deep enough to overflow the stack.
 */
export const encoder = <S extends Schema.Top & { readonly EncodingServices: never }>(
  schema: S,
  /** A hand-written check, true only where `Schema.is(schema)` is (`internal/plain.ts`). */
  quick?: (value: unknown) => boolean
) => {
  const is = SchemaParser.is(schema)
  const encode = SchemaParser.encodeUnknownResult(schema, parseOptions)
  return (value: unknown): Result.Result<S["Encoded"], InvalidRequestError> => {
    const problem = jsonProblem(value)
    if (problem !== undefined) return Result.fail(problem)
    return quick?.(value) === true || is(value) ?
      Result.succeed(value as S["Encoded"]) :
      Result.mapError(encode(value), firstIssue)
  }
}

/** Compiles `schema` into a tolerant decoder (an `open` struct keeps unknown fields). */
export const decoder = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S
): (value: unknown) => Result.Result<S["Type"], SchemaIssue.Issue> => {
  const decode = SchemaParser.decodeUnknownResult(schema, parseOptions)
  return (value) => decode(value)
}

/** `decoder`, with the `Schema.is` shortcut: for response schemas on a hot path. */
export const plainDecoder = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => {
  const is = SchemaParser.is(schema)
  const decode = decoder(schema)
  return (value: unknown): Result.Result<S["Type"], SchemaIssue.Issue> =>
    is(value) ? Result.succeed(value) : decode(value)
}
