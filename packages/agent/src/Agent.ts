/**
 * The tool-calling loop: ask the model, run the tools it calls, send the
 * results back, until it answers — or a limit stops it with a typed error.
 *
 * What it guarantees, where other loops differ:
 * - one `tool` message per call, in call order, whatever order they finish in;
 * - arguments that fail the tool's schema, an unknown tool, the tool's typed
 *   failure and a timeout go back to the model as `{"error": …}`;
 * - `maxSteps`, budgets and loops fail with a typed error carrying the
 *   transcript, never a silent stop;
 * - a forced `toolChoice` applies to the first model call only;
 * - interrupting the run interrupts the tools (their finalizers run).
 *
 * @since 0.1.0
 */
import * as Chat from "@switchboard/core/Chat"
import type * as Protocol from "@switchboard/core/Protocol"
import type * as ResponseMetadata from "@switchboard/core/ResponseMetadata"
import * as StructuredOutput from "@switchboard/core/StructuredOutput"
import { checkCount, duration } from "@switchboard/core/SwitchboardConfig"
import {
  ConfigurationError,
  type InvalidRequestError,
  type RequestError,
  type StreamRequestError
} from "@switchboard/core/SwitchboardError"
import type * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { AgentError, ToolDefect } from "./AgentError.js"
import * as Approvals from "./internal/approvals.js"
import * as Input from "./internal/input.js"
import * as Loop from "./internal/loop.js"
import * as RunOf from "./internal/runOf.js"
import * as Tools from "./internal/tools.js"
import type { Transcript } from "./Transcript.js"

/**
 * The tools of a toolkit by name, as `effect/ai`'s `Toolkit.make` gives them.
 *
 * @since 0.1.0
 * @category models
 */
export type AnyTools = Record<string, Tool.Any>

/**
 * What a run needs: the chat service, the handlers of the toolkit's tools
 * (`toolkit.toLayer(...)`, the same layer `LanguageModel.generateText` uses),
 * and what the tools' schemas and `addDependency` ask of each call.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<T extends AnyTools> =
  | Chat.Chat
  | Tool.HandlersFor<T>
  | Tool.HandlerServices<T[keyof T]>

/**
 * What a run with a toolkit that carries its handlers needs (a
 * `Toolkit.WithHandler`, as `McpClient.toolkit` gives): the chat service and
 * what the tools ask of each call, no handlers.
 *
 * @since 1.1.0
 * @category models
 */
export type BoundRequirements<T extends AnyTools> = Chat.Chat | Tool.HandlerServices<T[keyof T]>

/**
 * The toolkit of a run: `effect/ai`'s `Toolkit`, its handlers in the context
 * (`toolkit.toLayer(...)`), or a `Toolkit.WithHandler` that carries them
 * (`yield* toolkit`, `McpClient.toolkit(client)`). Either way the agent
 * decodes the arguments, asks for approvals and applies `ToolTimeout` and
 * `ToolRetry`.
 *
 * @since 1.1.0
 * @category models
 */
export type AnyToolkit<T extends AnyTools> = Toolkit.Toolkit<T> | Toolkit.WithHandler<T>

/**
 * What a run needs for its toolkit: `Requirements` for a `Toolkit`,
 * `BoundRequirements` for a `Toolkit.WithHandler`.
 *
 * @since 1.1.0
 * @category models
 */
export type RequirementsOf<T extends AnyTools, K> = K extends Toolkit.Any ? Requirements<T> : BoundRequirements<T>

export {
  /**
   * A tool annotation: the limit for one call of the tool, retries included.
   * A call that reaches it is interrupted (its finalizers run) and the model
   * gets `{"error": "get_weather timed out after 10s"}`.
   *
   * @example
   * ```ts
   * import * as Agent from "@switchboard/agent/Agent"
   * import * as Schema from "effect/Schema"
   * import * as Tool from "effect/ai/Tool"
   *
   * const GetWeather = Tool.make("get_weather", {
   *   parameters: Schema.Struct({ city: Schema.String }),
   *   success: Schema.String
   * }).annotate(Agent.ToolTimeout, "10 seconds")
   * ```
   * @since 0.1.0
   * @category annotations
   */
  ToolTimeout,
  /**
   * A tool annotation: a `Schedule` over the handler's typed failure; only
   * the handler is retried, never the model call.
   *
   * @example
   * ```ts
   * import * as Agent from "@switchboard/agent/Agent"
   * import * as Schedule from "effect/Schedule"
   * import * as Schema from "effect/Schema"
   * import * as Tool from "effect/ai/Tool"
   *
   * const Flaky = Tool.make("flaky", { success: Schema.String }).annotate(Agent.ToolRetry, Schedule.recurs(2))
   * ```
   * @since 0.1.0
   * @category annotations
   */
  ToolRetry
} from "./internal/annotations.js"

/**
 * What a call produced, as sent back to the model in its `tool` message.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResult {
  readonly callId: string
  readonly name: string
  /** The arguments as the model sent them (a JSON string). */
  readonly arguments: string
  readonly outcome: "success" | "failure" | "invalid-arguments" | "unknown-tool" | "timeout" | "denied"
  /** The `content` of the `tool` message. */
  readonly content: string
}

/**
 * One model call and the calls it made.
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  /** Position in this run's `steps`. */
  readonly index: number
  /** How many messages the request carried. */
  readonly requestMessages: number
  /** The model's reply, as appended to the transcript. */
  readonly message: Protocol.AssistantMessage
  /** In call order. */
  readonly toolResults: ReadonlyArray<ToolResult>
  /** As the service reported it; `undefined` for a step resumed from a transcript. */
  readonly usage: Protocol.Usage | undefined
  /**
   * What the step counts against `budget.totalTokens`: `usage.total_tokens`,
   * or, when the service sent no usage, an estimate (`estimated: true`) of
   * one token per 4 characters of the request's messages and the reply.
   */
  readonly tokens: { readonly total: number; readonly estimated: boolean }
  /**
   * The metadata of the reply the step's model call got (request id, rate
   * limits, timings: `ResponseMetadata`); `undefined` for a step resumed
   * from a transcript or answered by an interceptor without a call.
   */
  readonly response?: ResponseMetadata.ResponseMetadata | undefined
}

/**
 * A call waiting for a decision, typed per tool: `params` are the arguments
 * decoded with the tool's parameters schema (narrow on `name`).
 *
 * @since 0.1.0
 * @category models
 */
export type PendingApproval<T extends AnyTools = AnyTools> = T extends AnyTools ? {
    readonly [K in keyof T & string]: PendingCall<K, ParamsOf<T[K]>>
  }[keyof T & string]
  : never

/** A tool's decoded parameters; `unknown` for a tool of no known type (`Tool.Any`). */
type ParamsOf<X> = X extends Tool.Tool<infer _Name, infer Config, infer _R> ? Config["parameters"]["Type"] : unknown

/**
 * A pending call of the tool `Name`, whose decoded arguments are `Params`.
 *
 * @since 1.1.0
 * @category models
 */
export interface PendingCall<Name extends string, Params> {
  /**
   * What a decision is keyed by: made from the call's id, its tool's name and
   * its arguments (canonical JSON), so a decision holds for this call with
   * these arguments only (`effect/ai`'s approval id plays the same part).
   */
  readonly approvalId: string
  readonly callId: string
  readonly name: Name
  /** The arguments as the model sent them (a JSON string). */
  readonly arguments: string
  /** The arguments decoded with the tool's parameters schema. */
  readonly params: Params
}

/**
 * A decision on a pending call: `"approve"`, `"deny"`, or, in the shape of
 * `effect/ai`'s and the AI SDK's approval responses, `{ approved, reason }`
 * (a denial's `reason` is told to the model).
 *
 * @since 0.1.0
 * @category models
 */
export const Decision: Schema.Codec<Decision> = Input.Decision

/**
 * What is decided about a call that awaits approval: run it or deny it (with
 * a reason told to the model).
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = "approve" | "deny" | { readonly approved: boolean; readonly reason?: string | undefined }

/**
 * Where a run's `invoke_agent` span is, to resume it in the same trace.
 *
 * @since 1.1.0
 * @category models
 */
export interface TraceContext {
  readonly traceId: string
  readonly spanId: string
}

/**
 * How a run ended, with its steps, its transcript, its usage and, with
 * `output`, its value.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentResult<A = undefined, T extends AnyTools = AnyTools> {
  /**
   * - `completed`: the model answered without calling tools (and, with
   *   `output`, gave the value);
   * - `stopped`: a `stopWhen` condition held after a step;
   * - `paused`: calls await approval (`pending`); give decisions to `resume`.
   */
  readonly status: "completed" | "stopped" | "paused"
  /** The last assistant message. */
  readonly message: Protocol.AssistantMessage
  /** Its text content, `""` when it has none. */
  readonly text: string
  readonly steps: ReadonlyArray<Step>
  /** The whole conversation, the input messages included. */
  readonly transcript: Transcript
  /** Summed over the steps of this run, plus the `usage` given to `resume`. */
  readonly usage: Protocol.Usage
  readonly pending: ReadonlyArray<PendingApproval<T>>
  /** With `output`: the decoded value, when `completed`; otherwise `undefined`. */
  readonly output: A | undefined
  /** The run's `invoke_agent` span: give it to `resume` (`trace`) to go on in the same trace. */
  readonly trace: TraceContext
}

/**
 * Where a run stands when its guards check it: before each model call
 * (`calls` empty), and once a reply asks for tools, before any of them runs
 * (`calls` are that reply's).
 *
 * @since 0.1.0
 * @category models
 */
export interface GuardState {
  readonly transcript: Transcript
  readonly steps: ReadonlyArray<Step>
  /** Model calls made so far in this run. */
  readonly modelCalls: number
  /** Tokens counted against `budget.totalTokens` (prior usage included). */
  readonly tokens: number
  /** The clock's time when the run started. */
  readonly startedAt: number
  readonly calls: ReadonlyArray<Protocol.ToolCall>
}

/**
 * A check that may end a run with an `AgentError`. The built-in ones
 * (`maxSteps`, the token and duration budgets, loop detection) run first,
 * then `RunOptions.guards` in order.
 *
 * @since 0.1.0
 * @category models
 */
export type Guard = (state: GuardState) => Effect.Effect<void, AgentError>

/**
 * Ends the run with status `stopped` when it holds after a step.
 *
 * @since 0.1.0
 * @category models
 */
export type StopCondition = (steps: ReadonlyArray<Step>) => boolean

/**
 * Limits of one run, checked before every model call (`toolCalls`: before a
 * step's calls run). Reaching one fails with `BudgetExceeded`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Budget {
  /**
   * Tokens of this run (and of the `usage` given to `resume`). A step the
   * service reports no usage for counts an estimate (`Step.tokens`). Each
   * request's `max_tokens` is clamped to what is left.
   */
  readonly totalTokens?: number | undefined
  readonly toolCalls?: number | undefined
  /**
   * Measured with `Clock`, from the start of the run, and bounding all of
   * it: reaching it interrupts a model call or a tool that is running.
   */
  readonly duration?: Duration.Input | undefined
}

/**
 * Wraps every model call and every tool call of a run, each with its step
 * (the model call's position in this run) and, for a tool, the call id: how
 * `@switchboard/workflow` makes each one a durable activity. A wrapper must
 * give back what the call gives (it may give a stored result instead).
 *
 * @since 0.1.0
 * @category models
 */
export interface Interceptor {
  readonly model: <R>(
    step: number,
    call: Effect.Effect<Protocol.ChatCompletion, StreamRequestError, R>
  ) => Effect.Effect<Protocol.ChatCompletion, StreamRequestError, R>
  readonly tool: <R>(
    step: number,
    callId: string,
    call: Effect.Effect<ToolResult, ToolDefect, R>
  ) => Effect.Effect<ToolResult, ToolDefect, R>
}

/**
 * What a step is about to send, and what `prepareStep` may change.
 *
 * @since 0.1.0
 * @category models
 */
export interface StepSettings {
  readonly model: string
  /** The toolkit's definitions; a subset hides tools for this step. */
  readonly tools: ReadonlyArray<Protocol.Tool>
  readonly toolChoice: Protocol.ToolChoice | undefined
}

/**
 * Where the run stands when a step is prepared.
 *
 * @since 0.1.0
 * @category models
 */
export interface StepContext extends StepSettings {
  /** The index the step will have in `steps`. */
  readonly index: number
  readonly steps: ReadonlyArray<Step>
  readonly transcript: Transcript
}

/**
 * What `run` takes: the model, the messages, the tools and the run's limits.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions<T extends AnyTools, A = undefined, I = A> {
  readonly model: string
  /**
   * The agent's name, for its run's span: `invoke_agent {name}` with
   * `gen_ai.agent.name` (`docs/observability.md`). Default: none.
   */
  readonly name?: string | undefined
  readonly messages: ReadonlyArray<Protocol.Message>
  /**
   * An `effect/ai` toolkit, its handlers from `toolkit.toLayer(...)`, or a
   * `Toolkit.WithHandler` carrying its own (`McpClient.toolkit`, `yield* toolkit`).
   */
  readonly toolkit: AnyToolkit<T>
  /** `required` or a named function applies to the first model call, then `auto`. */
  readonly toolChoice?: Protocol.ToolChoice | undefined
  /** `max_tokens` of each model call (clamped to what `budget.totalTokens` has left). */
  readonly maxTokens?: number | undefined
  /**
   * A schema for the run's answer: once the model answers, one more model
   * call forces a `respond` tool whose parameters are the schema, and the
   * result's `output` is its decoded arguments. A reply that does not decode
   * fails with `StructuredOutputError`.
   */
  readonly output?: Schema.Codec<A, I> | undefined
  /**
   * Called before each model call: returns changes to its model, tools (a
   * subset of the toolkit's definitions) or tool choice. What it returns
   * wins over `toolChoice`'s first-call rule.
   */
  readonly prepareStep?: ((context: StepContext) => Effect.Effect<Partial<StepSettings>>) | undefined
  /**
   * Called after each step, once its tool results are in the transcript: a
   * checkpoint (save the transcript, say). The run waits for it.
   */
  readonly onStep?: ((step: Step, transcript: Transcript) => Effect.Effect<void>) | undefined
  /** Model calls allowed in this run. Default 10. */
  readonly maxSteps?: number | undefined
  readonly budget?: Budget | undefined
  /** Calls of one step run at once. Default 4. */
  readonly concurrency?: number | undefined
  readonly stopWhen?: StopCondition | ReadonlyArray<StopCondition> | undefined
  /** Identical calls (name and arguments) allowed since the last user message before `LoopDetected`. Default 3. */
  readonly loopLimit?: number | undefined
  /** Wraps each model and tool call; default none. */
  readonly intercept?: Interceptor | undefined
  /** Checks of your own, after the built-in ones (`Guard`). */
  readonly guards?: ReadonlyArray<Guard> | undefined
}

/**
 * What `resume` takes: a paused run's transcript and the decisions on its
 * pending calls, with the options of `run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResumeOptions<T extends AnyTools, A = undefined, I = A>
  extends Omit<RunOptions<T, A, I>, "messages" | "toolChoice">
{
  /** A paused run's transcript, or one from an error. */
  readonly transcript: Transcript
  /**
   * Usage of the runs before (the paused result's `usage`): added to this
   * run's `usage` and counted against `budget.totalTokens`.
   */
  readonly usage?: Protocol.Usage | undefined
  /**
   * By `approvalId` (`PendingApproval.approvalId`, or `approvalId(call)` for
   * a call that needs none). Calls of tools that need approval run only when
   * approved; a denial works for any unanswered call. A missing decision
   * pauses the run again. A key that is no unanswered call's approval id (a
   * call id, a call whose arguments changed since) fails with
   * `DecisionMismatch` before anything runs.
   */
  readonly decisions?: Readonly<Record<string, Decision>> | undefined
  /**
   * The paused run's `trace`: this run's span becomes a child of that run's,
   * so that one conversation is one trace across pauses. Default: the
   * current span, as for `run`.
   */
  readonly trace?: TraceContext | undefined
}

/**
 * A streamed run's event: a piece of the model's text in a step.
 *
 * @since 0.1.0
 * @category events
 */
export interface TextDelta {
  readonly _tag: "TextDelta"
  readonly step: number
  readonly text: string
}

/**
 * A streamed run's event: the model called a tool, with its name and
 * arguments.
 *
 * @since 0.1.0
 * @category events
 */
export interface ToolCallStarted {
  readonly _tag: "ToolCallStarted"
  readonly step: number
  readonly callId: string
  readonly name: string
  readonly arguments: string
}

/**
 * Emitted when a call finishes, so in completion order; the transcript keeps call order.
 *
 * @since 0.1.0
 * @category events
 */
export interface ToolResultEvent {
  readonly _tag: "ToolResult"
  readonly step: number
  readonly result: ToolResult
}

/**
 * A streamed run's event: a step (one call of the model and the tools it
 * asked for) ended.
 *
 * @since 0.1.0
 * @category events
 */
export interface StepFinished {
  readonly _tag: "StepFinished"
  readonly step: Step
}

/**
 * A streamed run's last event: the run's result.
 *
 * @since 0.1.0
 * @category events
 */
export interface Finished<A = undefined, T extends AnyTools = AnyTools> {
  readonly _tag: "Finished"
  readonly result: AgentResult<A, T>
}

/**
 * Any event of a streamed run, in the order they happen.
 *
 * @since 0.1.0
 * @category events
 */
export type AgentEvent<A = undefined, T extends AnyTools = AnyTools> =
  | TextDelta
  | ToolCallStarted
  | ToolResultEvent
  | StepFinished
  | Finished<A, T>

const count = (field: string, value: number | undefined, fallback: number, min: number) => checkCount(field, value ?? fallback, min)

const unset = Result.succeed(undefined)

/**
 * The options with defaults filled in; a limit or a tool that makes no sense
 * fails, naming it, before any call (the first in this order). Checked with
 * `Result.all`, not a generator: this runs once per run.
 */
const settings = <T extends AnyTools, A, I>(
  options: Omit<ResumeOptions<T, A, I>, "transcript"> & { readonly toolChoice?: Protocol.ToolChoice | undefined },
  complete: Loop.Settings["complete"],
  emit: Loop.Settings["emit"]
): Result.Result<Loop.Settings, ConfigurationError | InvalidRequestError> => {
  const budget = options.budget ?? {}
  const checked = Result.all({
    decisions: Input.decisions(options.decisions),
    tools: Tools.resolve(options.toolkit),
    maxSteps: count("maxSteps", options.maxSteps, 10, 1),
    totalTokens: budget.totalTokens === undefined ? unset : count("budget.totalTokens", budget.totalTokens, 0, 0),
    toolCalls: budget.toolCalls === undefined ? unset : count("budget.toolCalls", budget.toolCalls, 0, 0),
    duration: budget.duration === undefined ? unset : duration("budget.duration", budget.duration),
    concurrency: count("concurrency", options.concurrency, 4, 1),
    loopLimit: count("loopLimit", options.loopLimit, 3, 1)
  })
  return Result.map(checked, ({ concurrency, decisions, duration, loopLimit, maxSteps, toolCalls, tools, totalTokens }) => ({
    model: options.model,
    name: options.name,
    tools,
    definitions: Tools.definitions(tools),
    toolChoice: options.toolChoice,
    maxTokens: options.maxTokens,
    output: options.output === undefined
      ? undefined
      : StructuredOutput.plan(options.output as Schema.Codec<unknown>, { mode: "tool" }),
    prepareStep: options.prepareStep,
    onStep: options.onStep,
    priorUsage: options.usage,
    maxSteps,
    budget: {
      ...(totalTokens === undefined ? {} : { totalTokens }),
      ...(toolCalls === undefined ? {} : { toolCalls }),
      ...(duration === undefined ? {} : { duration })
    },
    concurrency,
    stopWhen: options.stopWhen === undefined ? [] : typeof options.stopWhen === "function" ? [options.stopWhen] : options.stopWhen,
    loopLimit,
    guards: options.guards ?? [],
    intercept: options.intercept ?? Loop.noIntercept,
    decisions,
    trace: options.trace,
    complete,
    emit
  }))
}

/**
 * Every way a run can fail: a limit or a tool defect (`AgentError`), the
 * service, and, for a run with `output`, a value that does not decode.
 *
 * @since 0.1.0
 * @category models
 */
export type RunError<A = undefined> =
  | AgentError
  | RequestError
  | ([A] extends [undefined] ? never : StructuredOutput.StructuredOutputError)

/**
 * How `Agent.stream` can fail: as `run`, and as a streamed reply can
 * (`StreamError`).
 *
 * @since 0.2.0
 * @category models
 */
export type StreamRunError<A = undefined> = RunError<A> | StreamRequestError

const create: Loop.Settings["complete"] = (request) => Chat.create(request)

/** A model call through `Chat.stream`, its text deltas emitted as they come. */
const streamed = (emit: Emit): Loop.Settings["complete"] => (request, step) =>
  Chat.accumulate(
    Chat.stream(request, { includeUsage: true }).pipe(
      Stream.tap((chunk) => {
        const text = chunk.choices[0]?.delta.content
        return text ? emit({ _tag: "TextDelta", step, text }) : Effect.void
      })
    )
  )

type Emit = (event: AgentEvent<unknown>) => Effect.Effect<void>

/** What `run`, `resume` and their streams share: `resume`'s options, the start as `run` has it too. */
type AnyOptions = Omit<ResumeOptions<AnyTools, unknown, unknown>, "transcript"> & {
  readonly toolChoice?: Protocol.ToolChoice | undefined
}

/**
 * The loop from `start` (the field it came in, decoded first), its events
 * sent to `emit` (a stream's queue) when given, the model then streamed.
 */
const go = (
  options: AnyOptions,
  field: "messages" | "transcript",
  start: unknown,
  emit: Emit | undefined
): Effect.Effect<AgentResult<unknown>, StreamRunError<unknown>, Loop.Requirements> =>
  Effect.suspend(() =>
    Effect.fromResult(Result.all([settings(options, emit === undefined ? create : streamed(emit), emit), Input.transcript(field, start)]))
  ).pipe(
    Effect.flatMap(([resolved, transcript]) => {
      const run = Loop.run(resolved, transcript)
      return emit === undefined ? run : Effect.tap(run, (result) => emit({ _tag: "Finished", result }))
    })
  )

/** `go` for `run` and `resume`, typed by their options: loosely typed inside, the signature narrows. */
const runTyped = <T extends AnyTools, A, K>(options: object, field: "messages" | "transcript", start: unknown) =>
  go(options as AnyOptions, field, start, undefined) as unknown as Effect.Effect<
    AgentResult<A, T>,
    RunError<A>,
    RequirementsOf<T, K>
  >

/**
 * `go` for `stream` and `resumeStream`: the loop's events into a stream's
 * queue, the stream ending with the run. The consumer takes what the queue
 * holds, so its size is the chunk a reader gets when the service sends faster
 * than it reads: 256 rather than 16 cost a served part about a tenth less
 * CPU (docs/decisions.md), for at most 256 small events held. The stream
 * remembers its run (`internal/runOf.ts`), so that `UiStream.encodeAgent`
 * can run the loop itself and write each event as it comes, without the
 * queue.
 */
const streamTyped = <T extends AnyTools, A, K>(options: object, field: "messages" | "transcript", start: unknown) =>
  RunOf.remember(
    Stream.callback<AgentEvent<unknown>, StreamRunError<unknown>, Loop.Requirements>((queue) =>
      go(options as AnyOptions, field, start, (event) => Effect.asVoid(Queue.offer(queue, event))).pipe(
        Effect.asVoid,
        Queue.into(queue)
      ), { bufferSize: 256 }),
    (emit) => go(options as AnyOptions, field, start, emit)
  ) as unknown as Stream.Stream<AgentEvent<A, T>, StreamRunError<A>, RequirementsOf<T, K>>

/**
 * Runs the loop to an answer, a pause for approval, a stop condition, or a
 * typed error.
 *
 * @example
 * ```ts
 * import * as Agent from "@switchboard/agent/Agent"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import * as Tool from "effect/ai/Tool"
 * import * as Toolkit from "effect/ai/Toolkit"
 *
 * const GetWeather = Tool.make("get_weather", {
 *   parameters: Schema.Struct({ city: Schema.String }),
 *   success: Schema.String
 * })
 * const toolkit = Toolkit.make(GetWeather)
 * const handlers = toolkit.toLayer({ get_weather: ({ city }) => Effect.succeed(`18 °C in ${city}`) })
 *
 * const program = Effect.gen(function*() {
 *   const result = yield* Agent.run({
 *     model: "gpt-4o-mini",
 *     messages: [{ role: "user", content: "Weather in Paris?" }],
 *     toolkit
 *   })
 *   return result.text
 * }).pipe(Effect.provide(handlers))
 * ```
 * @since 0.1.0
 * @category running
 */
export const run = <T extends AnyTools, A = undefined, I = A, K extends AnyToolkit<T> = AnyToolkit<T>>(
  options: RunOptions<T, A, I> & { readonly toolkit: K }
): Effect.Effect<AgentResult<A, T>, RunError<A>, RequirementsOf<T, K>> =>
  runTyped<T, A, K>(options, "messages", options.messages)

/**
 * Continues from a transcript, decoded first (a bad one fails with an
 * `InvalidRequestError` naming the field): runs the unanswered calls of its
 * last assistant message (approved, denied, or not needing approval), then
 * goes on as `run`. `maxSteps` and the tool-call and duration budgets count
 * from zero again; tokens go on from the `usage` given.
 *
 * @since 0.1.0
 * @category running
 */
export const resume = <T extends AnyTools, A = undefined, I = A, K extends AnyToolkit<T> = AnyToolkit<T>>(
  options: ResumeOptions<T, A, I> & { readonly toolkit: K }
): Effect.Effect<AgentResult<A, T>, RunError<A>, RequirementsOf<T, K>> =>
  runTyped<T, A, K>(options, "transcript", options.transcript)

/**
 * The run as a stream of events, ending with `Finished` (whose result may be
 * `paused`) or failing with the run's error. The loop runs ahead of the
 * consumer by at most a few events; ending the stream early interrupts it.
 *
 * @example
 * ```ts
 * import * as Agent from "@switchboard/agent/Agent"
 * import * as Console from "effect/Console"
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 * import * as Toolkit from "effect/ai/Toolkit"
 *
 * const toolkit = Toolkit.make()
 * const program = Agent.stream({ model: "gpt-4o-mini", toolkit, messages: [{ role: "user", content: "Hi" }] }).pipe(
 *   Stream.runForEach((event) => event._tag === "TextDelta" ? Console.log(event.text) : Effect.void)
 * )
 * ```
 * @since 0.1.0
 * @category running
 */
export const stream = <T extends AnyTools, A = undefined, I = A, K extends AnyToolkit<T> = AnyToolkit<T>>(
  options: RunOptions<T, A, I> & { readonly toolkit: K }
): Stream.Stream<AgentEvent<A, T>, StreamRunError<A>, RequirementsOf<T, K>> =>
  streamTyped<T, A, K>(options, "messages", options.messages)

/**
 * `resume` as a stream of events, as `stream` gives them: a paused run goes
 * on streaming, with its `usage` (and token budget) carried and, given
 * `trace`, in the paused run's trace.
 *
 * @example
 * ```ts
 * import * as Agent from "@switchboard/agent/Agent"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import * as Stream from "effect/Stream"
 * import * as Tool from "effect/ai/Tool"
 * import * as Toolkit from "effect/ai/Toolkit"
 *
 * const DeleteFile = Tool.make("delete_file", { parameters: Schema.Struct({ path: Schema.String }), needsApproval: true })
 * const toolkit = Toolkit.make(DeleteFile)
 * const options = { model: "gpt-4o-mini", toolkit }
 * const program = Effect.gen(function*() {
 *   const paused = yield* Agent.run({ ...options, messages: [{ role: "user", content: "Hi" }] })
 *   const decisions = Object.fromEntries(paused.pending.map((call) => [call.approvalId, "approve" as const]))
 *   const { transcript, usage, trace } = paused
 *   return yield* Stream.runCollect(Agent.resumeStream({ ...options, transcript, usage, trace, decisions }))
 * })
 * ```
 * @since 1.1.0
 * @category running
 */
export const resumeStream = <T extends AnyTools, A = undefined, I = A, K extends AnyToolkit<T> = AnyToolkit<T>>(
  options: ResumeOptions<T, A, I> & { readonly toolkit: K }
): Stream.Stream<AgentEvent<A, T>, StreamRunError<A>, RequirementsOf<T, K>> =>
  streamTyped<T, A, K>(options, "transcript", options.transcript)

/**
 * Runs an agent's stream (`stream`, `resumeStream`), telling `f` each event
 * as it comes, and gives the run's result: the `Finished` event's, with no
 * guard to write.
 *
 * @example
 * ```ts
 * import * as Agent from "@switchboard/agent/Agent"
 * import * as Console from "effect/Console"
 * import * as Effect from "effect/Effect"
 * import * as Toolkit from "effect/ai/Toolkit"
 *
 * const toolkit = Toolkit.make()
 * const program = Agent.stream({ model: "gpt-4o-mini", toolkit, messages: [{ role: "user", content: "Hi" }] }).pipe(
 *   Agent.runForEach((event) => event._tag === "TextDelta" ? Console.log(event.text) : Effect.void)
 * )
 * ```
 * @since 1.1.0
 * @category running
 */
export const runForEach: {
  <A, T extends AnyTools, E2, R2>(
    f: (event: AgentEvent<A, T>) => Effect.Effect<void, E2, R2>
  ): <E, R>(self: Stream.Stream<AgentEvent<A, T>, E, R>) => Effect.Effect<AgentResult<A, T>, E | E2, R | R2>
  <A, T extends AnyTools, E, R, E2, R2>(
    self: Stream.Stream<AgentEvent<A, T>, E, R>,
    f: (event: AgentEvent<A, T>) => Effect.Effect<void, E2, R2>
  ): Effect.Effect<AgentResult<A, T>, E | E2, R | R2>
} = dual(2, <A, T extends AnyTools, E, R, E2, R2>(
  self: Stream.Stream<AgentEvent<A, T>, E, R>,
  f: (event: AgentEvent<A, T>) => Effect.Effect<void, E2, R2>
): Effect.Effect<AgentResult<A, T>, E | E2, R | R2> =>
  Effect.suspend(() => {
    let result: AgentResult<A, T> | undefined
    return Stream.runForEach(self, (event) => {
      if (event._tag === "Finished") result = event.result
      return f(event)
    }).pipe(
      // An agent's stream ends with `Finished` or fails: anything else is a stream that is not one.
      Effect.flatMap(() => (result === undefined ? Effect.die(new Error("the stream ended without a Finished event")) : Effect.succeed(result)))
    )
  }))

/**
 * The approval id of a call (`PendingApproval.approvalId`): for a decision
 * on a call that needs no approval (a denial), or to check one given back.
 *
 * @since 1.1.0
 * @category approvals
 */
export const approvalId = (call: Protocol.ToolCall): Effect.Effect<string> =>
  Effect.map(Approvals.approvalIds([call]), (ids) => ids[0]!)

/**
 * Ends the run after `n` steps (status `stopped`).
 *
 * @since 0.1.0
 * @category stop conditions
 */
export const stepCountIs = (n: number): StopCondition => (steps) => steps.length >= n

/**
 * Ends the run after a step that called the tool `name`.
 *
 * @since 0.1.0
 * @category stop conditions
 */
export const hasToolCall = (name: string): StopCondition => (steps) =>
  steps.at(-1)?.toolResults.some((result) => result.name === name) ?? false
