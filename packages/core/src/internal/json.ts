/**
 * Reading what a server (or a model) wrote: JSON that cannot set a
 * prototype, and the service's own message out of the usual error shapes.
 */
import * as Result from "effect/Result"
import { isObject } from "./plain.js"

// `JSON.parse` makes `"__proto__"` an own property, harmless until a copy
// assigns it (`out[key] = value`), as Schema's decoding of records and of
// preserved fields does: then it replaces the copy's prototype. Only a text
// that holds the name, or an escape that could spell it, takes the slower
// path that drops such keys. Two `indexOf`s, not a regular expression: this
// runs on every stream chunk and every reply, and the regular expression
// cost about a tenth of the `JSON.parse` it guards (docs/performance.md).
const mayHoldProto = (text: string) => text.indexOf("__proto__") !== -1 || text.indexOf("\\u") !== -1

const dropProto = (key: string, value: unknown) => (key === "__proto__" ? undefined : value)

/**
 * `JSON.parse` without any `__proto__` key: text from the wire can never
 * change an object's prototype, however it is copied later. Throws like
 * `JSON.parse` on text that is not JSON.
 */
export const parse = (text: string): unknown => (mayHoldProto(text) ? JSON.parse(text, dropProto) : JSON.parse(text))

/** How deep a model's JSON may nest: far beyond any tool's parameters or output schema, short of any stack. */
export const maxModelDepth = 128

/** Whether `value` nests deeper than `max`, walked without recursion. */
const deeperThan = (value: unknown, max: number): boolean => {
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!
    if (typeof current !== "object" || current === null) continue
    if (depth >= max) return true
    for (const child of Object.values(current)) stack.push([child, depth + 1])
  }
  return false
}

/**
 * A model's JSON (tool arguments, structured output): `parse`, and no
 * nesting deeper than `maxModelDepth`, which a decoder's recursion could
 * not survive. A failure says why in words that never quote the text (a
 * model may echo anything, the key included).
 */
export const parseModel = (text: string): Result.Result<unknown, string> => {
  let value: unknown
  try {
    value = parse(text)
  } catch (e) {
    // V8's messages quote the text near the fault: only their position is kept.
    const at = e instanceof Error ? /at position \d+/.exec(e.message)?.[0] : undefined
    return Result.fail(`not JSON${at === undefined ? "" : ` (${at})`}`)
  }
  return deeperThan(value, maxModelDepth) ? Result.fail(`nested deeper than ${maxModelDepth} levels`) : Result.succeed(value)
}

const text = (u: unknown): string | undefined => (typeof u === "string" && u.trim() !== "" ? u : undefined)

/** The details of an error as the service wrote them. */
export interface ServiceError {
  readonly message: string
  readonly type?: string | undefined
  readonly code?: string | undefined
  readonly param?: string | undefined
}

const scalar = (u: unknown): string | undefined =>
  typeof u === "string" ? u : typeof u === "number" ? String(u) : undefined

/** An `{"message", "type", "code", "param"}` object, or a plain string. */
const fromNode = (node: unknown): ServiceError | undefined => {
  if (text(node) !== undefined) return { message: node as string }
  if (!isObject(node)) return undefined
  const message = text(node.message) ?? text(node.msg) ?? text(node.detail) ?? text(node.error_description)
  return message === undefined ? undefined : {
    message,
    type: scalar(node.type),
    code: scalar(node.code),
    param: scalar(node.param)
  }
}

const firstOf = (list: unknown): ServiceError | undefined => (Array.isArray(list) ? fromNode(list[0]) : undefined)

/**
 * The service's message from the common error shapes: `{"error": {"message"}}`,
 * `{"error": "text"}`, `{"message": "text"}`, `{"detail": "text"}`,
 * `{"detail": [{"msg"}]}`, `{"errors": [{"message"}]}`.
 */
export const serviceError = (json: unknown): ServiceError | undefined => {
  if (!isObject(json)) return undefined
  return fromNode(json.error) ?? firstOf(json.errors) ?? fromNode(json) ?? firstOf(json.detail)
}

/** `serviceError` of a text, when the text is JSON. */
export const serviceErrorOf = (body: string): ServiceError | undefined => {
  try {
    return serviceError(parse(body))
  } catch {
    return undefined
  }
}
