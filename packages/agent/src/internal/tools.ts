/**
 * One tool call, from the model's JSON to the `tool` message sent back.
 * Tools are `effect/ai`'s; their handlers are the ones `toolkit.toLayer`
 * provides (under each tool's `id`, where `effect/ai`'s own toolkit finds
 * them). Everything the model can correct (bad JSON, arguments that fail the
 * schema, an unknown name, the tool's typed failure, a timeout) becomes the
 * message's content as `{"error": …}`; only a defect fails the run.
 *
 * @internal
 */
import { formatPath } from "@switchboard/core/internal/path"
import * as ChatTool from "@switchboard/core/internal/tool"
import * as Protocol from "@switchboard/core/Protocol"
import { ConfigurationError } from "@switchboard/core/SwitchboardError"
import { duration } from "@switchboard/core/SwitchboardConfig"
import * as Telemetry from "@switchboard/core/Telemetry"
import * as AiError from "effect/ai/AiError"
import * as Prompt from "effect/ai/Prompt"
import * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import type { Decision, ToolResult } from "../Agent.js"
import { ToolDefect } from "../AgentError.js"
import type { Transcript } from "../Transcript.js"
import { ToolRetry, ToolTimeout } from "./annotations.js"
import { inSpan } from "./span.js"

/** What the loop knows of a tool: the tool, what is sent for it, and how to run it. */
export interface Resolved {
  readonly tool: Tool.Any
  readonly definition: Protocol.Tool
  /** Reads a call's arguments: the parameters schema, or for a strict tool its codec (nulls for optionals). */
  readonly parameters: Schema.Codec<unknown, unknown, unknown, unknown>
  /** `parameters`' decoder, every issue reported. */
  readonly decode: (input: unknown) => Effect.Effect<unknown, Schema.SchemaError, unknown>
  readonly timeout: Duration.Duration | undefined
  readonly retry: Schedule.Schedule<unknown, unknown> | undefined
  /** Where `toolkit.toLayer` put the handler: the tool's `id`. */
  readonly handler: Context.Key<Tool.Handler<string>, Tool.Handler<string>>
  /** For a toolkit that carries its handlers (`Toolkit.WithHandler`): runs the call through its `handle`. */
  readonly bound: ((params: unknown, call: Protocol.ToolCall) => Effect.Effect<unknown, unknown, unknown>) | undefined
  /** The handler's success and failure as sent to the model (the tool's `successSchema`, its failure result schema). */
  readonly encodeSuccess: Encode
  readonly encodeFailure: Encode
}

type Encode = (value: unknown) => Effect.Effect<unknown, Schema.SchemaError, unknown>

/** The tools of a run by name, in the toolkit's order. */
export type Tools = ReadonlyMap<string, Resolved>

/** What the loop makes of a tool beyond core's conversion: where its handler is, how its results are encoded. */
const runnerOf = (tool: Tool.Any): Pick<Resolved, "handler" | "encodeSuccess" | "encodeFailure"> => ({
  handler: Context.Service<Tool.Handler<string>>(tool.id),
  // Once per tool: `failureResultSchema` makes a new union, and so a new encoder, at each call.
  encodeSuccess: Schema.encodeUnknownEffect(tool.successSchema as Schema.Codec<unknown, unknown, never, unknown>),
  encodeFailure: Schema.encodeUnknownEffect(
    Tool.failureResultSchema(tool) as unknown as Schema.Codec<unknown, unknown, never, unknown>
  )
})

// A tool never changes (`annotate` and the setters make a new one), so what
// is made from it is made once; a tool dropped drops its entry.
const runners = new WeakMap<Tool.Any, ReturnType<typeof runnerOf>>()

const runnerFor = (tool: Tool.Any) => {
  let found = runners.get(tool)
  if (found === undefined) {
    found = runnerOf(tool)
    runners.set(tool, found)
  }
  return found
}

// The decoder of a parameters schema, made once per schema.
const decoders = new WeakMap<Schema.Codec<unknown, unknown, unknown, unknown>, Resolved["decode"]>()

const decoderFor = (schema: Schema.Codec<unknown, unknown, unknown, unknown>): Resolved["decode"] => {
  let found = decoders.get(schema)
  if (found === undefined) {
    const decode = Schema.decodeUnknownEffect(schema)
    found = (input) => decode(input, allErrors)
    decoders.set(schema, found)
  }
  return found
}

const allErrors = { errors: "all" } as const

/**
 * A toolkit as a run takes it: `effect/ai`'s `Toolkit` (handlers from the
 * context, put there by `toolkit.toLayer`), or one that carries its handlers,
 * a `Toolkit.WithHandler` (what `yield* toolkit` and `McpClient.toolkit` give).
 */
export type Input = Toolkit.Any | { readonly tools: Record<string, Tool.Any>; readonly handle: unknown }

type Handle = (
  name: string,
  params: unknown,
  toolCallId?: string
) => Effect.Effect<Stream.Stream<Tool.HandlerResult<Tool.Any>, unknown, unknown>, unknown, unknown>

/**
 * A call through the toolkit's own `handle`, which decodes its parameters
 * (so the decoded value is encoded back with the tool's schema) and streams
 * preliminary results before the final one: only the final one counts.
 */
const boundRunner = (handle: Handle, tool: Tool.Any) => {
  const encode = Schema.isSchema(tool.parametersSchema)
    ? Schema.encodeUnknownEffect(tool.parametersSchema as Schema.Codec<unknown, unknown, never, unknown>)
    : Effect.succeed
  return (params: unknown, call: Protocol.ToolCall): Effect.Effect<unknown, unknown, unknown> =>
    encode(params).pipe(
      Effect.orDie,
      Effect.flatMap((encoded) => handle(tool.name, encoded, call.id)),
      Effect.flatMap((results) => Stream.runLast(Stream.filter(results, (r) => !r.preliminary))),
      Effect.flatMap(Option.match({
        onNone: () => Effect.die(`${tool.name} gave no result`),
        onSome: (r) => (r.isFailure ? Effect.fail(r.result) : Effect.succeed(r.result))
      }))
    )
}

const refuse = (name: string, message: string) =>
  Result.fail(new ConfigurationError({ field: `toolkit.tools.${name}`, message }))

/**
 * The toolkit's tools, checked before anything is sent: what core's
 * `internal/tool` refuses (a name or parameters the service would refuse, a
 * schema with no JSON Schema, a provider-defined tool, two tools of one
 * name), or a timeout that makes no sense, fails with a `ConfigurationError`
 * naming the tool. The definition sent and the strictness rule are core's,
 * shared with `@switchboard/ai`: a tool is strict when annotated `Tool.Strict`.
 */
export const resolve = (toolkit: Input): Result.Result<Tools, ConfigurationError> => {
  let found = resolved.get(toolkit)
  if (found === undefined) {
    found = resolveNow(toolkit)
    resolved.set(toolkit, found)
  }
  return found
}

// A toolkit, as a tool, never changes (`Toolkit.merge` and `toLayer` make
// new ones), so a run of a toolkit it has seen reuses what was resolved.
const resolved = new WeakMap<Input, Result.Result<Tools, ConfigurationError>>()

const resolveNow = (toolkit: Input): Result.Result<Tools, ConfigurationError> => {
  const chat = ChatTool.fromTools(toolkit.tools, false)
  if (Result.isFailure(chat)) return refuse(chat.failure.tool, chat.failure.message)
  const tools = new Map<string, Resolved>()
  // A `Toolkit` has no `handle`: it is an Effect that gives a `WithHandler`.
  const handle = "handle" in toolkit && typeof toolkit.handle === "function" ? (toolkit.handle as Handle) : undefined
  for (const { decoder, definition, tool } of chat.success) {
    const timeoutInput = Context.getOrUndefined(tool.annotations, ToolTimeout)
    const timeout = timeoutInput === undefined ? undefined : duration(`toolkit.tools.${tool.name}.ToolTimeout`, timeoutInput)
    if (timeout !== undefined && Result.isFailure(timeout)) return Result.fail(timeout.failure)
    tools.set(tool.name, {
      tool,
      definition,
      parameters: decoder,
      decode: decoderFor(decoder),
      ...runnerFor(tool),
      bound: handle === undefined ? undefined : boundRunner(handle, tool),
      timeout: timeout?.success,
      retry: Context.getOrUndefined(tool.annotations, ToolRetry) as Schedule.Schedule<unknown, unknown> | undefined
    })
  }
  return Result.succeed(tools)
}

/** The `tools` of a chat request, in the toolkit's order (made once per resolved toolkit). */
export const definitions = (tools: Tools): ReadonlyArray<Protocol.Tool> => {
  let found = madeDefinitions.get(tools)
  if (found === undefined) {
    found = Array.from(tools.values(), (resolved) => resolved.definition)
    madeDefinitions.set(tools, found)
  }
  return found
}

const madeDefinitions = new WeakMap<Tools, ReadonlyArray<Protocol.Tool>>()

/** A call checked against the toolkit, before anything runs. */
export type Prepared =
  | { readonly _tag: "Ready"; readonly call: Protocol.ToolCall; readonly tool: Resolved; readonly params: unknown }
  | { readonly _tag: "Rejected"; readonly call: Protocol.ToolCall; readonly outcome: ToolResult["outcome"]; readonly error: string }

export const errorContent = (error: unknown): string => JSON.stringify({ error })

/** What the model reads for a denied call; `reason` (`": …"` or empty) is the user's. */
export const denial = (name: string, reason = ""): string =>
  errorContent(`the user denied this call to ${name}; it did not run${reason}`)

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** Each failing field by its path, with what is wrong (never the value: it came from the model). */
const describeIssues = (issue: SchemaIssue.Issue): string =>
  formatter(issue).issues
    .map((i) => {
      const path = (i.path ?? []).map((key) => (typeof key === "object" ? key.key : key))
      return path.length > 0 ? `${formatPath(path)}: ${i.message}` : i.message
    })
    .join("; ")

/** How deep a model's arguments may nest (core's bound for a model's JSON). */
export const maxArgumentsDepth = Protocol.maxModelJsonDepth

// `Protocol.parseModelJson` drops `__proto__` keys (the model's arguments
// cannot give a decoded value, a `Schema.Record` say, an attacker-chosen
// prototype), bounds the nesting, and never quotes the text in its reason.
const parseJson = (text: string): Result.Result<unknown, string> =>
  text.trim() === "" ? Result.succeed({}) : Protocol.parseModelJson(text)

const rejected = (call: Protocol.ToolCall, outcome: ToolResult["outcome"], error: string): Prepared => ({
  _tag: "Rejected",
  call,
  outcome,
  error
})

/**
 * Finds the tool and decodes the arguments with its parameters schema (Effect
 * 4 compiles a schema's parser once and keeps it, so nothing is cached here).
 */
export const prepare = (tools: Tools, call: Protocol.ToolCall): Effect.Effect<Prepared, never, unknown> => {
  const name = call.function.name
  const tool = tools.get(name)
  if (tool === undefined) {
    const known = Array.from(tools.keys()).join(", ") || "none"
    return Effect.succeed(rejected(call, "unknown-tool", `unknown tool "${name}"; the tools are: ${known}`))
  }
  const json = parseJson(call.function.arguments)
  if (Result.isFailure(json)) {
    return Effect.succeed(rejected(call, "invalid-arguments", `arguments are not usable JSON: ${json.failure}`))
  }
  // Eager: a schema without effects decodes at once, and the call is prepared without a step of the fiber.
  return Effect.matchEager(tool.decode(json.success), {
    onFailure: (error) => rejected(call, "invalid-arguments", `invalid arguments for ${name}: ${describeIssues(error.issue)}`),
    onSuccess: (params): Prepared => ({ _tag: "Ready", call, tool, params })
  })
}

/**
 * Whether a ready call waits for a decision: the tool's `needsApproval`, a
 * boolean or a function of the decoded arguments and the conversation.
 */
export const needsApproval = (
  prepared: Prepared,
  transcript: () => ReadonlyArray<Prompt.Message>
): Effect.Effect<boolean> => {
  if (prepared._tag === "Rejected") return Effect.succeed(false)
  const rule = prepared.tool.tool.needsApproval
  if (typeof rule !== "function") return Effect.succeed(rule === true)
  const answer = rule(prepared.params, { toolCallId: prepared.call.id, messages: transcript() })
  return Effect.isEffect(answer) ? answer : Effect.succeed(answer)
}

/**
 * The transcript as `effect/ai` messages, for a `needsApproval` function:
 * texts, calls (arguments parsed as a call's are) and results. Images are
 * left out: an approval rule reads what was said and asked.
 */
export const toPrompt = (transcript: Transcript): ReadonlyArray<Prompt.Message> => {
  const names = new Map<string, string>()
  const text = (content: Protocol.Message["content"]): string =>
    typeof content === "string" ? content : (content ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")
  return transcript.map((message): Prompt.Message => {
    switch (message.role) {
      case "system":
      case "developer":
        return Prompt.systemMessage({ content: text(message.content) })
      case "user":
        return Prompt.userMessage({ content: [Prompt.textPart({ text: text(message.content) })] })
      case "assistant": {
        const calls = (message.tool_calls ?? []).map((call) => {
          names.set(call.id, call.function.name)
          const params = parseJson(call.function.arguments)
          return Prompt.toolCallPart({
            id: call.id,
            name: call.function.name,
            params: Result.isSuccess(params) ? params.success : call.function.arguments,
            providerExecuted: false
          })
        })
        const said = message.content ? [Prompt.textPart({ text: message.content })] : []
        return Prompt.assistantMessage({ content: [...said, ...calls] })
      }
      case "tool":
        return Prompt.toolMessage({
          content: [Prompt.toolResultPart({
            id: message.tool_call_id,
            name: names.get(message.tool_call_id) ?? "",
            isFailure: false,
            result: text(message.content),
            providerExecuted: false
          })]
        })
    }
  })
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

/** What a handler gives to report progress: the loop has no use for it, the final result counts. */
const handlerContext = (call: Protocol.ToolCall): Toolkit.HandlerContext<Tool.Any> => ({
  toolCallId: call.id,
  preliminary: () => Effect.void
})

/**
 * The handler's effect, retried by the tool's schedule. It sees the services
 * its layer was built with and the caller's, the caller's winning for a key in
 * both, as with `effect/ai`'s toolkit: in Effect 4 the clock, the current span
 * and the log level live in the context too, and must be the caller's. A
 * handler that answers with an `Exit` (`Effect.succeed`) has nothing left to
 * run, so no context is made for it.
 */
const invoke = (resolved: Resolved, call: Protocol.ToolCall, params: unknown, caller: Context.Context<never>) => {
  const handled = resolved.bound !== undefined ? resolved.bound(params, call) : handle(resolved, call, params, caller)
  return resolved.retry === undefined ? handled : Effect.retry(handled, resolved.retry)
}

/** The context's handler called; a missing one, or one that throws, is a defect of the call. */
const handle = (resolved: Resolved, call: Protocol.ToolCall, params: unknown, caller: Context.Context<never>) => {
  const handler = Context.getOrUndefined(caller, resolved.handler)
  // Not found: the lookup as an effect fails the call with the runtime's own defect.
  if (handler === undefined) return Effect.flatMap(Effect.service(resolved.handler), () => Effect.void)
  let effect: ReturnType<typeof handler.handler>
  try {
    effect = handler.handler(params, handlerContext(call))
  } catch (error) {
    return Effect.die(error)
  }
  return Exit.isExit(effect)
    ? effect
    : effect.pipe(Effect.updateContext((input: Context.Context<never>) => withHandlerContext(input, handler.context)))
}

/**
 * `Context.merge(context, input)`, the caller's winning for a key in both,
 * made by adding to `input` only the handler's services it lacks (most are
 * the caller's already: the handlers' layer was built in its runtime). Each
 * is an overlay on `input`, not a copy of every service, so the fiber keeps
 * its context's cache.
 */
const withHandlerContext = (input: Context.Context<never>, context: Context.Context<never>): Context.Context<never> => {
  let out = input
  for (const [key, value] of entriesOf(context)) {
    if (Context.getOrUndefined(input, key) === undefined) out = Context.add(out, key, value)
  }
  return out
}

type Entry = readonly [Context.Key<unknown, unknown>, unknown]

// A handler's context is made once, with its layer: its entries as keys, once.
const entries = new WeakMap<Context.Context<never>, ReadonlyArray<Entry>>()

const entriesOf = (context: Context.Context<never>): ReadonlyArray<Entry> => {
  let found = entries.get(context)
  if (found === undefined) {
    found = Array.from(context.mapUnsafe, ([key, value]): Entry => [Context.Service<unknown>(key), value])
    entries.set(context, found)
  }
  return found
}

/** A bare `AiError` reason from a handler, made an `AiError` as `effect/ai`'s toolkit does. */
const normalizeFailure = (name: string, failure: unknown) =>
  AiError.isAiErrorReason(failure) ? AiError.make({ module: "Toolkit", method: `${name}.handle`, reason: failure }) : failure

/**
 * The value of an effect already done: Effect 4's `succeed`, and a decode or
 * encode by a schema without effects, are an `Exit`, read without a fiber.
 */
export const valueNow = <A, E, R>(effect: Effect.Effect<A, E, R>): { readonly value: A } | undefined =>
  Exit.isExit(effect) && Exit.isSuccess(effect) ? (effect as Exit.Success<A, E>) : undefined

/** Runs a ready call: handler, retry, timeout, then encodes what came out. */
const execute = (
  resolved: Resolved,
  call: Protocol.ToolCall,
  params: unknown,
  caller: Context.Context<never>
): Effect.Effect<ToolResult, never, unknown> => {
  const tool = resolved.tool
  const { encodeFailure, encodeSuccess } = resolved
  const failed = (failure: unknown) =>
    Effect.map(Effect.orDie(encodeFailure(normalizeFailure(tool.name, failure))), (encoded) =>
      result(call, "failure", errorContent(encoded)))
  const succeeded = (value: unknown) => {
    if (tool.toModelOutput !== undefined) {
      return Effect.succeed(result(call, "success", Prompt.toolModelOutputToText(tool.toModelOutput(value))))
    }
    // A schema without effects encodes at once, into an `Exit`.
    const encoded = encodeSuccess(value)
    const now = valueNow(encoded)
    return now !== undefined
      ? Exit.succeed(result(call, "success", successContent(now.value)))
      : Effect.map(Effect.orDie(encoded), (encoded) => result(call, "success", successContent(encoded)))
  }
  const timeout = resolved.timeout
  const invoked = invoke(resolved, call, params, caller)
  if (timeout === undefined) {
    // A handler that answered at once (`Effect.succeed`) is encoded at once.
    const now = valueNow(invoked)
    if (now !== undefined) return succeeded(now.value)
    return Effect.matchEffect(invoked, { onFailure: failed, onSuccess: succeeded })
  }
  return Effect.matchEffect(Effect.timeoutOption(invoked, timeout), {
    onFailure: failed,
    onSuccess: Option.match({
      onNone: () =>
        Effect.succeed(result(call, "timeout", errorContent(`${tool.name} timed out after ${Duration.format(timeout)}`))),
      onSome: succeeded
    })
  })
}

/**
 * The result of one call, in its `execute_tool` span; a defect (or an output
 * its schema cannot encode) fails with `ToolDefect` carrying `transcript`.
 */
export const answer = (
  prepared: Prepared,
  decision: Decision | undefined,
  transcript: Transcript
): Effect.Effect<ToolResult, ToolDefect, unknown> => {
  const call = prepared.call
  if (prepared._tag === "Rejected") return Effect.succeed(result(call, prepared.outcome, errorContent(prepared.error)))
  if (decision === "deny" || (typeof decision === "object" && !decision.approved)) {
    const reason = typeof decision === "object" && decision.reason ? `: ${decision.reason}` : ""
    return Effect.succeed(
      result(call, "denied", denial(call.function.name, reason))
    )
  }
  const defect = (defect: unknown) =>
    Effect.fail(
      new ToolDefect({ tool: call.function.name, callId: call.id, defect: Cause.pretty(Cause.die(defect)), transcript })
    )
  // One look at the caller's fiber for the handler and the content setting; the rest is eager.
  return Effect.withFiber((fiber) => {
    const capture = fiber.getRef(Telemetry.CaptureContent)
    return inSpan(Telemetry.spanName("execute_tool", call.function.name), {
      kind: "internal",
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.function.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function"
      }
    }, (span) => {
      const done = execute(prepared.tool, call, prepared.params, fiber.context)
      const annotated = (result: ToolResult) => {
        annotateResult(span, capture, result)
        return result
      }
      const now = valueNow(done)
      if (now !== undefined) return Exit.succeed(annotated(now.value))
      return Effect.map(Effect.catchDefect(done, defect), annotated)
    })
  })
}

/**
 * What the call came to, on its span: `error.type` (the outcome) unless it
 * succeeded; the arguments and result only when the user opted in to contents.
 */
const annotateResult = (span: Tracer.Span, capture: boolean, result: ToolResult): void => {
  if (result.outcome !== "success") span.attribute("error.type", result.outcome)
  if (capture) {
    span.attribute("gen_ai.tool.call.arguments", result.arguments)
    span.attribute("gen_ai.tool.call.result", result.content)
  }
}

/** A call's `tool` message. */
export const toolMessage = (result: ToolResult): Protocol.Message => ({
  role: "tool",
  tool_call_id: result.callId,
  content: result.content
})
