/**
 * One tool call, from the model's JSON to the `tool` message sent back.
 * Everything the model can correct (bad JSON, arguments that fail the schema,
 * an unknown name, the tool's typed failure, a timeout) becomes the message's
 * content as `{"error": …}`; only a defect fails the run.
 *
 * @internal
 */
import { formatPath } from "@switchboard/core/internal/path"
import * as Protocol from "@switchboard/core/Protocol"
import * as Telemetry from "@switchboard/core/Telemetry"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type { Decision, ToolResult } from "../Agent.js"
import { ToolDefect } from "../AgentError.js"
import * as Tool from "../Tool.js"
import type * as Toolkit from "../Toolkit.js"
import type { Transcript } from "../Transcript.js"

/** A call checked against the toolkit, before anything runs. */
export type Prepared =
  | { readonly _tag: "Ready"; readonly call: Protocol.ToolCall; readonly tool: Tool.Any; readonly params: unknown }
  | { readonly _tag: "Rejected"; readonly call: Protocol.ToolCall; readonly outcome: ToolResult["outcome"]; readonly error: string }

const errorContent = (error: unknown): string => JSON.stringify({ error })

const describeIssues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => (issue.path.length > 0 ? `${formatPath(issue.path)}: ${issue.message}` : issue.message))
    .join("; ")

/** How deep a model's arguments may nest (core's bound for a model's JSON). */
export const maxArgumentsDepth = Protocol.maxModelJsonDepth

// `Protocol.parseModelJson` drops `__proto__` keys (the model's arguments
// cannot give a decoded value, a `Schema.Record` say, an attacker-chosen
// prototype), bounds the nesting, and never quotes the text in its reason.
const parseJson = (text: string): Either.Either<unknown, string> =>
  text.trim() === "" ? Either.right({}) : Protocol.parseModelJson(text)

/** What the calls of a tool decode and encode with, compiled once. */
interface Codecs {
  readonly decodeParameters: (input: unknown) => Either.Either<unknown, ParseResult.ParseError>
  readonly encodeSuccess: (value: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
  readonly encodeFailure: (failure: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
}

// By tool: a tool's schemas never change, so a cache entry cannot go stale,
// and a tool dropped with its toolkit drops its entry.
const codecs = new WeakMap<Tool.Any, Codecs>()

const codecsOf = (tool: Tool.Any): Codecs => {
  let found = codecs.get(tool)
  if (found === undefined) {
    found = {
      decodeParameters: Schema.decodeUnknownEither(tool.parameters, { errors: "all" }),
      encodeSuccess: Schema.encodeUnknown(tool.success),
      encodeFailure: Schema.encodeUnknown(tool.failure as Schema.Schema<unknown, unknown>)
    }
    codecs.set(tool, found)
  }
  return found
}

/** Finds the tool and decodes the arguments with its schema. */
export const prepare = (toolkit: Toolkit.Any, call: Protocol.ToolCall): Prepared => {
  const name = call.function.name
  const tool = Object.hasOwn(toolkit.tools, name) ? toolkit.tools[name] : undefined
  if (tool === undefined) {
    const known = Object.keys(toolkit.tools).join(", ") || "none"
    return { _tag: "Rejected", call, outcome: "unknown-tool", error: `unknown tool "${name}"; the tools are: ${known}` }
  }
  const json = parseJson(call.function.arguments)
  if (Either.isLeft(json)) {
    return { _tag: "Rejected", call, outcome: "invalid-arguments", error: `arguments are not usable JSON: ${json.left}` }
  }
  const params = codecsOf(tool).decodeParameters(json.right)
  return Either.isLeft(params)
    ? { _tag: "Rejected", call, outcome: "invalid-arguments", error: `invalid arguments for ${name}: ${describeIssues(params.left)}` }
    : { _tag: "Ready", call, tool, params: params.right }
}

const result = (call: Protocol.ToolCall, outcome: ToolResult["outcome"], content: string): ToolResult => ({
  callId: call.id,
  name: call.function.name,
  arguments: call.function.arguments,
  outcome,
  content
})

/** A tool's success is sent as text when it encodes to a string, as JSON otherwise. */
const successContent = (encoded: unknown): string =>
  typeof encoded === "string" ? encoded : JSON.stringify(encoded) ?? "null"

/** The handler, retried by the tool's schedule. */
const invoke = (tool: Tool.Any, params: unknown) => {
  const handled = Effect.flatMap(Tool.handlerTag(tool.name), (handler) => handler.handle(params))
  return tool.retry === undefined ? handled : Effect.retry(handled, tool.retry as Schedule.Schedule<unknown, unknown>)
}

/** Runs a ready call: handler, retry, timeout, then encodes what came out. */
const execute = (tool: Tool.Any, call: Protocol.ToolCall, params: unknown) => {
  const { encodeFailure, encodeSuccess } = codecsOf(tool)
  const failed = (failure: unknown) =>
    Effect.map(Effect.orDie(encodeFailure(failure)), (encoded) => result(call, "failure", errorContent(encoded)))
  const succeeded = (value: unknown) =>
    Effect.map(Effect.orDie(encodeSuccess(value)), (encoded) => result(call, "success", successContent(encoded)))
  const timeout = tool.timeout
  if (timeout === undefined) return Effect.matchEffect(invoke(tool, params), { onFailure: failed, onSuccess: succeeded })
  return Effect.matchEffect(Effect.timeoutOption(invoke(tool, params), timeout), {
    onFailure: failed,
    onSuccess: Option.match({
      onNone: () =>
        Effect.succeed(result(call, "timeout", errorContent(`${tool.name} timed out after ${Duration.format(timeout)}`))),
      onSome: succeeded
    })
  })
}

/**
 * The result of one call; a defect (or an output its schema cannot encode)
 * fails with `ToolDefect` carrying `transcript`.
 */
export const answer = (
  prepared: Prepared,
  decision: Decision | undefined,
  transcript: Transcript
): Effect.Effect<ToolResult, ToolDefect, Tool.Handler<string>> => {
  const call = prepared.call
  if (prepared._tag === "Rejected") return Effect.succeed(result(call, prepared.outcome, errorContent(prepared.error)))
  if (decision === "deny") {
    return Effect.succeed(
      result(call, "denied", errorContent(`the user denied this call to ${call.function.name}; it did not run`))
    )
  }
  return execute(prepared.tool, call, prepared.params).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.fail(
        new ToolDefect({ tool: call.function.name, callId: call.id, defect: Cause.pretty(Cause.die(defect)), transcript })
      )
    ),
    Effect.tap(annotateResult),
    Effect.withSpan(Telemetry.spanName("execute_tool", call.function.name), {
      kind: "internal",
      captureStackTrace: false,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.function.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function"
      }
    })
  )
}

/**
 * What the call came to, on its span: `error.type` (the outcome) unless it
 * succeeded; the arguments and result only when the user opted in to contents.
 */
const annotateResult = (result: ToolResult) =>
  Effect.flatMap(Telemetry.CaptureContent, (capture) => {
    if (result.outcome === "success" && !capture) return Effect.void
    const attributes: Record<string, unknown> = {}
    if (result.outcome !== "success") attributes["error.type"] = result.outcome
    if (capture) {
      attributes["gen_ai.tool.call.arguments"] = result.arguments
      attributes["gen_ai.tool.call.result"] = result.content
    }
    return Effect.annotateCurrentSpan(attributes)
  })

/** A call's `tool` message. */
export const toolMessage = (result: ToolResult): Protocol.Message => ({
  role: "tool",
  tool_call_id: result.callId,
  content: result.content
})
