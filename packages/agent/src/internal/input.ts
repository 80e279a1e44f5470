/**
 * What a caller gives back to a run (a stored transcript, decisions) is
 * decoded with its schema before the loop reads it: a transcript from a
 * database, a page or another process is untrusted. A bad one fails with an
 * `InvalidRequestError` naming the field (`transcript[3].tool_calls[0].function`),
 * never a `TypeError` defect deep in the loop.
 *
 * @internal
 */
import { leafOf } from "@switchboard/core/internal/issue"
import { formatPath } from "@switchboard/core/internal/path"
import { jsonProblem } from "@switchboard/core/internal/validate"
import { InvalidRequestError } from "@switchboard/core/SwitchboardError"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import { Transcript } from "../Transcript.js"

/** `Agent.Decision`'s schema (here, for `Agent` imports this module). */
export const Decision = Schema.Union([
  Schema.Literals(["approve", "deny"]),
  Schema.Struct({ approved: Schema.Boolean, reason: Schema.optional(Schema.UndefinedOr(Schema.String)) })
])

const options = { reportInput: true } as const

const fieldOf = (root: string, path: ReadonlyArray<PropertyKey>) => formatPath([root, ...path])

const invalid = (root: string, issue: SchemaIssue.Issue) => {
  const leaf = leafOf(issue)
  const field = fieldOf(root, leaf.path)
  return new InvalidRequestError({ field, message: `${field} ${leaf.reason === "is missing" ? "is required" : leaf.reason}` })
}

/** Cycles, depth and non-JSON values first: nothing after meets a value that could overflow the stack. */
const jsonSafe = (root: string, value: unknown): Result.Result<void, InvalidRequestError> => {
  const problem = jsonProblem(value)
  if (problem === undefined) return Result.void
  const field = problem.field === "request" ? root : fieldOf(root, []) + (problem.field.startsWith("[") ? "" : ".") + problem.field
  return Result.fail(new InvalidRequestError({ field, message: `${field}${problem.message.slice(problem.field.length)}` }))
}

const isTranscript = SchemaParser.is(Transcript)
const decodeTranscript = SchemaParser.decodeUnknownResult(Transcript, options)

/**
 * Each call of one assistant message needs its own id: two calls sharing
 * one would share one decision and one `tool` message.
 */
const uniqueCallIds = (root: string, transcript: Transcript): Result.Result<Transcript, InvalidRequestError> => {
  for (let i = 0; i < transcript.length; i++) {
    const message = transcript[i]!
    if (message.role !== "assistant" || message.tool_calls === undefined) continue
    const seen = new Map<string, number>()
    for (let j = 0; j < message.tool_calls.length; j++) {
      const id = message.tool_calls[j]!.id
      const first = seen.get(id)
      if (first !== undefined) {
        const field = fieldOf(root, [i, "tool_calls", j, "id"])
        return Result.fail(
          new InvalidRequestError({ field, message: `${field} repeats the id of tool_calls[${first}]: each call needs its own id` })
        )
      }
      seen.set(id, j)
    }
  }
  return Result.succeed(transcript)
}

/**
 * The messages of `run` or the transcript of `resume`, decoded, each
 * message's call ids unique. A valid one is kept as it is (as core's request
 * encoder does), so a gateway's extra fields on a message still reach it.
 */
export const transcript = (root: string, value: unknown): Result.Result<Transcript, InvalidRequestError> =>
  Result.flatMap(jsonSafe(root, value), () => {
    const decoded = isTranscript(value) ? Result.succeed(value) : Result.mapError(decodeTranscript(value), (issue) => invalid(root, issue))
    return Result.flatMap(decoded, (t) => uniqueCallIds(root, t))
  })

const decodeDecisions = SchemaParser.decodeUnknownResult(Schema.Record(Schema.String, Decision), options)

/**
 * The decisions by approval id, in a `Map`: a key is looked up as an own
 * entry only, never as a member of `Object.prototype` (`constructor`,
 * `toString`, `__proto__`).
 */
export const decisions = (value: unknown): Result.Result<ReadonlyMap<string, typeof Decision.Type>, InvalidRequestError> => {
  if (value === undefined) return Result.succeed(new Map())
  return Result.flatMap(jsonSafe("decisions", value), () =>
    Result.map(
      Result.mapError(decodeDecisions(value), (issue) => invalid("decisions", issue)),
      (record) => new Map(Object.entries(record))
    ))
}
