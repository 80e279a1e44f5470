/**
 * The tool-calling loop behind `Agent.run`, `Agent.resume` and `Agent.stream`.
 *
 * Invariants: the assistant message is appended unchanged, then exactly one
 * `tool` message per call in call order; no request is sent with an
 * unanswered call; every way to stop without an answer is a typed error
 * carrying the transcript.
 *
 * @internal
 */
import type { Chat } from "@switchboard/core/Chat"
import type * as Protocol from "@switchboard/core/Protocol"
import * as RequestOptions from "@switchboard/core/RequestOptions"
import type * as ResponseMetadata from "@switchboard/core/ResponseMetadata"
import * as StructuredOutput from "@switchboard/core/StructuredOutput"
import { ResponseDecodeError, type StreamRequestError } from "@switchboard/core/SwitchboardError"
import * as Telemetry from "@switchboard/core/Telemetry"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import type * as Prompt from "effect/ai/Prompt"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"
import type {
  AgentEvent,
  AgentResult,
  Budget,
  Decision,
  Guard,
  GuardState,
  Interceptor,
  PendingApproval,
  Step,
  StepContext,
  StepSettings,
  StopCondition,
  ToolResult,
  TraceContext
} from "../Agent.js"
import { type AgentError, BudgetExceeded, DecisionMismatch, LoopDetected, MaxStepsExceeded } from "../AgentError.js"
import * as Transcript from "../Transcript.js"
import * as Approvals from "./approvals.js"
import { inSpan } from "./span.js"
import * as Tools from "./tools.js"

/** Everything a run is configured with, defaults resolved. */
export interface Settings {
  readonly model: string
  /** `gen_ai.agent.name` of the run's span. */
  readonly name: string | undefined
  readonly tools: Tools.Tools
  /** The `tools` of a request: the toolkit's, in its order. */
  readonly definitions: ReadonlyArray<Protocol.Tool>
  readonly toolChoice: Protocol.ToolChoice | undefined
  readonly maxTokens: number | undefined
  /** The `respond` tool and decoder of `output`. */
  readonly output: StructuredOutput.Plan<unknown, never> | undefined
  readonly prepareStep: ((context: StepContext) => Effect.Effect<Partial<StepSettings>>) | undefined
  readonly onStep: ((step: Step, transcript: Transcript.Transcript) => Effect.Effect<void>) | undefined
  /** Usage of earlier runs of this conversation (`resume`). */
  readonly priorUsage: Protocol.Usage | undefined
  readonly maxSteps: number
  readonly budget: Omit<Budget, "duration"> & { readonly duration?: Duration.Duration | undefined }
  readonly concurrency: number
  readonly stopWhen: ReadonlyArray<StopCondition>
  readonly loopLimit: number
  /** The caller's guards, run after the built-in ones. */
  readonly guards: ReadonlyArray<Guard>
  /** By approval id, for the unanswered calls a resumed run starts with. */
  readonly decisions: ReadonlyMap<string, Decision>
  /** The paused run's span, this run's parent. */
  readonly trace: TraceContext | undefined
  readonly intercept: Interceptor
  /** One model call: `Chat.create`, or `Chat.stream` folded into a completion. */
  readonly complete: (request: Protocol.ChatRequest, step: number) => Effect.Effect<Protocol.ChatCompletion, StreamRequestError, Chat>
  /** Where `Agent.stream` sends its events; `undefined` for a run nobody watches. */
  readonly emit: ((event: AgentEvent<unknown>) => Effect.Effect<void>) | undefined
}

interface State {
  readonly transcript: Transcript.Transcript
  readonly steps: ReadonlyArray<Step>
  readonly modelCalls: number
  readonly toolCalls: number
  readonly startedAt: number
  /** Counted against `budget.totalTokens`: prior usage, then each step's `tokens`. */
  readonly tokens: number
  /** The run's span. */
  readonly trace: TraceContext
}

/** Decisions by call id: those of the calls a resumed run starts with; none for the model's later calls. */
type Decided = ReadonlyMap<string, Decision>

const undecided: Decided = new Map()

/** Whether a decision lets the call run. */
const denied = (decision: Decision | undefined) =>
  decision === "deny" || (typeof decision === "object" && !decision.approved)

type Next =
  | { readonly _tag: "Continue"; readonly state: State }
  | { readonly _tag: "Done"; readonly result: AgentResult<unknown> }

/** The chat service, and whatever the handlers and the tools' schemas need: `Agent.Requirements` types it. */
export type Requirements = unknown
type Failure = AgentError | StreamRequestError | StructuredOutput.StructuredOutputError

/** Runs every call as it is. */
export const noIntercept: Interceptor = { model: (_, call) => call, tool: (_, __, call) => call }

const zeroUsage: Protocol.Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }

const addUsage = (a: Protocol.Usage, b: Protocol.Usage | undefined): Protocol.Usage =>
  b === undefined ? a : {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens
  }

const totalUsage = (steps: ReadonlyArray<Step>) => steps.reduce((sum, step) => addUsage(sum, step.usage), zeroUsage)

const lastAssistant = (transcript: Transcript.Transcript): Protocol.AssistantMessage => {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript[i]!
    if (message.role === "assistant") return message
  }
  return { role: "assistant", content: null }
}

const finish = (
  settings: Settings,
  state: State,
  status: AgentResult["status"],
  pending: ReadonlyArray<PendingApproval> = [],
  output: unknown = undefined
): AgentResult<unknown> => {
  const message = lastAssistant(state.transcript)
  return {
    status,
    message,
    text: message.content ?? "",
    steps: state.steps,
    transcript: state.transcript,
    usage: addUsage(settings.priorUsage ?? zeroUsage, totalUsage(state.steps)),
    pending,
    output,
    trace: state.trace
  }
}

/**
 * A step's tokens for the budget: as reported, else estimated at one token
 * per 4 characters of the request's messages and the reply.
 */
const stepTokens = (
  request: Protocol.ChatRequest,
  message: Protocol.AssistantMessage,
  usage: Protocol.Usage | undefined
): Step["tokens"] =>
  usage !== undefined
    ? { total: usage.total_tokens, estimated: false }
    : { total: Math.ceil((JSON.stringify(request.messages).length + JSON.stringify(message).length) / 4), estimated: true }

/** `maxTokens`, clamped to what `budget.totalTokens` has left (at least 1: the budget was checked). */
const maxTokensAt = (settings: Settings, state: State): number | undefined => {
  const total = settings.budget.totalTokens
  const left = total === undefined ? undefined : Math.max(1, total - state.tokens)
  if (left === undefined) return settings.maxTokens
  return settings.maxTokens === undefined ? left : Math.min(settings.maxTokens, left)
}

/** Forced choices (`required`, a named function) apply to the first model call only, so they cannot loop. */
const toolChoiceAt = (choice: Protocol.ToolChoice | undefined, modelCalls: number): Protocol.ToolChoice | undefined =>
  modelCalls === 0 || choice === undefined || choice === "none" ? choice : "auto"

const requestOf = (settings: Settings, state: State, step: StepSettings): Protocol.ChatRequest => {
  const maxTokens = maxTokensAt(settings, state)
  return {
    model: step.model,
    messages: state.transcript,
    ...(step.tools.length > 0 ? { tools: step.tools } : {}),
    ...(step.tools.length > 0 && step.toolChoice !== undefined ? { tool_choice: step.toolChoice } : {}),
    ...(maxTokens === undefined ? {} : { max_tokens: maxTokens })
  }
}

/** The next model call's request, after `prepareStep`'s changes. */
const request = (settings: Settings, state: State): Effect.Effect<Protocol.ChatRequest> => {
  const defaults: StepSettings = {
    model: settings.model,
    tools: settings.definitions,
    toolChoice: toolChoiceAt(settings.toolChoice, state.modelCalls)
  }
  if (settings.prepareStep === undefined) return Effect.succeed(requestOf(settings, state, defaults))
  const context: StepContext = { ...defaults, index: state.steps.length, steps: state.steps, transcript: state.transcript }
  return Effect.map(settings.prepareStep(context), (changes) => requestOf(settings, state, { ...defaults, ...changes }))
}

// ---------------------------------------------------------------------------
// Guards: each may end the run; the built-in ones first (`Agent.Guard`)
// ---------------------------------------------------------------------------

/** `maxSteps`: no model call past it. */
const maxStepsGuard = (settings: Settings): Guard => (state) =>
  state.modelCalls < settings.maxSteps ?
    Effect.void :
    Effect.fail(new MaxStepsExceeded({ maxSteps: settings.maxSteps, transcript: state.transcript }))

/** `budget.totalTokens` and `budget.duration`, before every model call; none without them. */
const budgetGuards = (settings: Settings): ReadonlyArray<Guard> => {
  const { duration, totalTokens } = settings.budget
  const max = duration === undefined ? undefined : Duration.toMillis(duration)
  if (max === undefined && totalTokens === undefined) return []
  return [(state) => {
    const transcript = state.transcript
    if (totalTokens !== undefined && state.tokens >= totalTokens) {
      return Effect.fail(new BudgetExceeded({ limit: "totalTokens", max: totalTokens, used: state.tokens, transcript }))
    }
    if (max === undefined) return Effect.void
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      now - state.startedAt >= max ?
        Effect.fail(new BudgetExceeded({ limit: "duration", max, used: now - state.startedAt, transcript })) :
        Effect.void)
  }]
}

/** The calls of the assistant messages since the last user message, the latest first. */
const recentCalls = (transcript: Transcript.Transcript): ReadonlyArray<ReadonlyArray<Protocol.ToolCall>> => {
  const out: Array<ReadonlyArray<Protocol.ToolCall>> = []
  for (let i = transcript.length - 1; i >= 0 && transcript[i]!.role !== "user"; i--) {
    const message = transcript[i]!
    if (message.role === "assistant" && message.tool_calls) out.push(message.tool_calls)
  }
  return out
}

/**
 * The same call text made `loopLimit` times since the last user message.
 * A key's count is at most its tool name's, so the keys (which parse every
 * call's arguments) are made only when some name of this step's reaches the
 * limit: most steps stop at counting names.
 */
const loopGuard = (settings: Settings): Guard => ({ calls, transcript }) => {
  const recent = recentCalls(transcript)
  const names = new Map<string, number>()
  for (const message of recent) {
    for (const call of message) names.set(call.function.name, (names.get(call.function.name) ?? 0) + 1)
  }
  if (!calls.some((call) => (names.get(call.function.name) ?? 0) >= settings.loopLimit)) return Effect.void
  const keys = calls.map(callKey)
  const counts = new Map<string, number>()
  for (const message of recent) {
    // The step's own message is the last one: its keys are made once.
    for (const key of message === calls ? keys : message.map(callKey)) {
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
  }
  const looping = keys.findIndex((key) => (counts.get(key) ?? 0) >= settings.loopLimit)
  return looping === -1 ? Effect.void : Effect.fail(
    new LoopDetected({
      tool: calls[looping]!.function.name,
      arguments: calls[looping]!.function.arguments,
      count: counts.get(keys[looping]!)!,
      transcript
    })
  )
}

/**
 * The guards of a run, the built-in ones first, then the caller's: each list
 * holds only those that can end the run at its point, as they run twice a step.
 */
interface Guards {
  /** Before a model call: the budgets, `maxSteps`. */
  readonly call: ReadonlyArray<Guard>
  /** Before a step's tools: loop detection. */
  readonly tools: ReadonlyArray<Guard>
}

const guardsOf = (settings: Settings): Guards => ({
  call: [...budgetGuards(settings), maxStepsGuard(settings), ...settings.guards],
  tools: [loopGuard(settings), ...settings.guards]
})

const check = (guards: ReadonlyArray<Guard>, state: GuardState): Effect.Effect<void, AgentError> =>
  guards.length === 0 ? Effect.void :
  guards.length === 1 ? guards[0]!(state) :
  Effect.forEach(guards, (guard) => guard(state), { discard: true })

/** Name and arguments, with the arguments' JSON normalised when it parses. */
const callKey = (call: Protocol.ToolCall): string => {
  let args = call.function.arguments
  try {
    args = JSON.stringify(JSON.parse(args))
  } catch {
    // Invalid JSON is compared as it came.
  }
  return `${call.function.name}\u0000${args}`
}

/**
 * Runs the calls of `message` (concurrently, results in call order) and
 * appends their `tool` messages, or pauses when a call awaits approval.
 */
const runCalls = (
  settings: Settings,
  state: State,
  step: Omit<Step, "toolResults">,
  calls: ReadonlyArray<Protocol.ToolCall>,
  decided: Decided
): Effect.Effect<Next, Failure, Requirements> =>
  Effect.flatMapEager(prepareAll(settings.tools, calls), (prepared) =>
    Effect.flatMapEager(pendingOf(prepared, state.transcript, decided), (pending) => {
      // Nothing of the step runs before every approval is given: results must
      // stay in call order, and a half-run step could not be resumed in order.
      if (pending.length > 0) {
        const paused: State = { ...state, steps: [...state.steps, { ...step, toolResults: [] }] }
        return Effect.succeed<Next>({ _tag: "Done", result: finish(settings, paused, "paused", pending) })
      }
      return runPrepared(settings, state, step, prepared, decided)
    }))

/**
 * Each call checked against the toolkit, in order: a schema without effects
 * decodes at once, so most steps prepare their calls without a fiber step each.
 */
const prepareAll = (
  tools: Tools.Tools,
  calls: ReadonlyArray<Protocol.ToolCall>
): Effect.Effect<ReadonlyArray<Tools.Prepared>, never, Requirements> => {
  const done: Array<Tools.Prepared> = []
  for (let i = 0; i < calls.length; i++) {
    const prepared = Tools.prepare(tools, calls[i]!)
    const now = Tools.valueNow(prepared)
    if (now === undefined) {
      // From the first that must run, one after the other as before.
      const rest = calls.slice(i + 1)
      return Effect.flatMap(prepared, (first) =>
        Effect.map(Effect.forEach(rest, (call) => Tools.prepare(tools, call)), (others) => [...done, first, ...others]))
    }
    done.push(now.value)
  }
  return Effect.succeed(done)
}

/** The valid calls without a decision whose tool's `needsApproval` says so. */
const pendingOf = (
  prepared: ReadonlyArray<Tools.Prepared>,
  transcript: Transcript.Transcript,
  decided: Decided
): Effect.Effect<ReadonlyArray<PendingApproval>> => {
  // Only calls of tools with a rule and no decision yet: most steps have none to ask.
  const open = prepared.filter((p): p is Tools.Prepared & { readonly _tag: "Ready" } =>
    p._tag === "Ready" && p.tool.tool.needsApproval !== undefined && p.tool.tool.needsApproval !== false &&
    !decided.has(p.call.id)
  )
  if (open.length === 0) return Effect.succeed([])
  // Made only for a `needsApproval` function, once per step.
  let prompt: ReadonlyArray<Prompt.Message> | undefined
  const messages = () => (prompt ??= Tools.toPrompt(transcript))
  return Effect.gen(function*() {
    const asked = yield* Effect.filter(open, (p) => Tools.needsApproval(p, messages))
    const ids = yield* Approvals.approvalIds(asked.map((p) => p.call))
    return asked.map((p, i): PendingApproval => ({
      approvalId: ids[i]!,
      callId: p.call.id,
      name: p.call.function.name,
      arguments: p.call.function.arguments,
      params: p.params
    }))
  })
}

/** Runs the prepared calls (concurrently, results in call order) and appends their `tool` messages. */
const runPrepared = (
  settings: Settings,
  state: State,
  step: Omit<Step, "toolResults">,
  prepared: ReadonlyArray<Tools.Prepared>,
  decided: Decided
): Effect.Effect<Next, Failure, Requirements> => {
  const runnable = prepared.filter((p) => p._tag === "Ready" && !denied(decided.get(p.call.id))).length
  const maxCalls = settings.budget.toolCalls
  if (maxCalls !== undefined && state.toolCalls + runnable > maxCalls) {
    return Effect.fail(
      new BudgetExceeded({ limit: "toolCalls", max: maxCalls, used: state.toolCalls + runnable, transcript: state.transcript })
    )
  }
  const run = (p: Tools.Prepared) => runOne(settings, step.index, p, state.transcript, decided.get(p.call.id))
  // A single call needs no fiber of its own (`forEach` would fork two): it runs in the step's.
  const results = prepared.length === 1
    ? Effect.mapEager(run(prepared[0]!), (result) => [result])
    : Effect.forEach(prepared, run, { concurrency: settings.concurrency })
  return Effect.flatMapEager(results, (toolResults) => {
    const done: Step = { ...step, toolResults }
    const next: State = {
      ...state,
      transcript: [...state.transcript, ...toolResults.map(Tools.toolMessage)],
      steps: [...state.steps, done],
      toolCalls: state.toolCalls + runnable
    }
    return Effect.mapEager(finished(settings, done, next.transcript), (): Next =>
      settings.stopWhen.some((stop) => stop(next.steps))
        ? { _tag: "Done", result: finish(settings, next, "stopped") }
        : { _tag: "Continue", state: next })
  })
}

const runOne = (
  settings: Settings,
  step: number,
  prepared: Tools.Prepared,
  transcript: Transcript.Transcript,
  decision: Decision | undefined
) => {
  const call = prepared.call
  const run = settings.intercept.tool(step, call.id, Tools.answer(prepared, decision, transcript))
  const emit = settings.emit
  if (emit === undefined) return run
  return emit({ _tag: "ToolCallStarted", step, callId: call.id, name: call.function.name, arguments: call.function.arguments }).pipe(
    Effect.andThen(run),
    Effect.tap((result: ToolResult) => emit({ _tag: "ToolResult", step, result }))
  )
}

/**
 * The reply with every tool call's id usable: an empty or repeated id (some
 * models send them) is replaced by one made from the step and position, so
 * each call gets its own `tool` message and the next request is valid. The
 * transcript keeps the replaced ids, in the assistant and the tool messages.
 */
const withCallIds = (message: Protocol.AssistantMessage, step: number): Protocol.AssistantMessage => {
  const calls = message.tool_calls
  if (calls === undefined) return message
  const seen = new Set<string>()
  let changed = false
  const fixed = calls.map((call, i) => {
    const usable = call.id !== "" && !seen.has(call.id)
    seen.add(call.id)
    if (usable) return call
    changed = true
    return { ...call, id: `call_${step}_${i}` }
  })
  return changed ? { ...message, tool_calls: fixed } : message
}

/** The latest transcript of a run, for the error that ends it at its duration budget. */
interface Progress {
  transcript: Transcript.Transcript
}

/** `StepFinished`, then the `onStep` checkpoint. */
const finished = (settings: Settings, step: Step, transcript: Transcript.Transcript) => {
  const checkpoint = settings.onStep === undefined ? Effect.void : settings.onStep(step, transcript)
  return settings.emit === undefined ? checkpoint : Effect.andThen(settings.emit({ _tag: "StepFinished", step }), checkpoint)
}

/**
 * Sends `request` (through the interceptor) and reads the first choice's
 * message, its tool-call ids made usable, and the metadata of the reply it
 * came in (none when an interceptor answered without a call, e.g. a replay).
 */
const call = (settings: Settings, request: Protocol.ChatRequest, index: number) =>
  Effect.suspend(() => {
    let response: ResponseMetadata.ResponseMetadata | undefined
    const onResponse = (metadata: ResponseMetadata.ResponseMetadata) =>
      Effect.sync(() => {
        response = metadata
      })
    const completed = RequestOptions.withRequestOptions(settings.intercept.model(index, settings.complete(request, index)), { onResponse })
    return Effect.flatMap(completed, (completion) => {
      const message = completion.choices[0]?.message
      return message === undefined
        ? Effect.fail(new ResponseDecodeError({ message: "the completion has no choices", body: "" }))
        : Effect.succeed({ message: withCallIds(message, index), usage: completion.usage ?? undefined, response })
    })
  })

/** One model call and its tools, in the step's span. */
const step = (
  settings: Settings,
  guards: Guards,
  state: State,
  progress: Progress
): Effect.Effect<Next, Failure, Requirements> =>
  inSpan("Agent.step", { attributes: { "agent.step": state.steps.length } }, () =>
    // Eager where a part is done at once (the built-in guards, a request without `prepareStep`).
    Effect.flatMapEager(check(guards.call, { ...state, calls: [] }), () =>
      Effect.flatMapEager(request(settings, state), (sent) =>
        Effect.flatMap(call(settings, sent, state.steps.length), (reply) => replied(settings, guards, state, progress, sent, reply)))))

/** What a step does with the model's reply: the answer, or the reply's calls. */
const replied = (
  settings: Settings,
  guards: Guards,
  state: State,
  progress: Progress,
  sent: Protocol.ChatRequest,
  { message, response, usage }: Effect.Success<ReturnType<typeof call>>
): Effect.Effect<Next, Failure, Requirements> => {
  const transcript = [...state.transcript, message]
  progress.transcript = transcript
  const calls = message.tool_calls ?? []
  const tokens = stepTokens(sent, message, usage)
  const base = { index: state.steps.length, requestMessages: state.transcript.length, message, usage, tokens, response }
  const next: State = { ...state, transcript, modelCalls: state.modelCalls + 1, tokens: state.tokens + tokens.total }
  if (calls.length > 0) {
    return Effect.flatMapEager(check(guards.tools, { ...next, calls }), () => runCalls(settings, next, base, calls, undecided))
  }
  const done: Step = { ...base, toolResults: [] }
  const answered: State = { ...next, steps: [...state.steps, done] }
  const output = settings.output
  return Effect.flatMapEager(finished(settings, done, transcript), (): Effect.Effect<Next, Failure, Requirements> =>
    output === undefined
      ? Effect.succeed({ _tag: "Done", result: finish(settings, answered, "completed") })
      : Effect.map(respond(settings, answered, output), (result): Next => ({ _tag: "Done", result })))
}

/**
 * The `output` step, after the answer: one more model call forcing the
 * `respond` tool, its arguments decoded. The step is in `steps` (and its
 * usage in `usage`); the transcript keeps ending with the answer.
 */
const respond = (settings: Settings, state: State, output: StructuredOutput.Plan<unknown, never>) =>
  Effect.gen(function*() {
    // Not counted against `maxSteps`: the answer is in; only the budgets and the caller's guards apply.
    yield* check([...budgetGuards(settings), ...settings.guards], { ...state, calls: [] })
    const index = state.steps.length
    const base = requestOf(settings, state, { model: settings.model, tools: settings.definitions, toolChoice: undefined })
    const sent = yield* Effect.fromResult(StructuredOutput.applyTo(output, base))
    const { message, response, usage } = yield* call(settings, sent, index)
    const done: Step = {
      index,
      requestMessages: state.transcript.length,
      message,
      toolResults: [],
      usage,
      tokens: stepTokens(sent, message, usage),
      response
    }
    yield* finished(settings, done, state.transcript)
    const text = StructuredOutput.textOf(output, message)
    if (text === undefined) {
      const issue = `the reply has no ${output.name} call`
      return yield* StructuredOutput.shown(
        new StructuredOutput.StructuredOutputError({ message: issue, mode: "tool", text: message.content ?? "", issue })
      )
    }
    // The model's text is the service's: redacted and bounded as `Chat.createObject`'s.
    const value = yield* Effect.catch(output.decode(text), StructuredOutput.shown)
    return finish(settings, { ...state, steps: [...state.steps, done] }, "completed", [], value)
  }).pipe((effect) => inSpan("Agent.output", { attributes: { "agent.step": state.steps.length } }, () => effect))

const loop = (
  settings: Settings,
  guards: Guards,
  state: State,
  progress: Progress
): Effect.Effect<AgentResult<unknown>, Failure, Requirements> =>
  Effect.flatMap(step(settings, guards, state, progress), (next) => {
    if (next._tag === "Done") return Effect.succeed(next.result)
    progress.transcript = next.state.transcript
    return loop(settings, guards, next.state, progress)
  })

/**
 * `budget.duration` bounds the whole run, tools included: reaching it
 * interrupts whatever runs (a model call, a tool) and fails with the
 * transcript as far as it got.
 */
const withinDuration = <A, R>(settings: Settings, progress: Progress, run: Effect.Effect<A, Failure, R>) => {
  const duration = settings.budget.duration
  if (duration === undefined) return run
  const max = Duration.toMillis(duration)
  return Effect.timeoutOrElse(run, {
    duration,
    orElse: () => Effect.fail(new BudgetExceeded({ limit: "duration", max, used: max, transcript: progress.transcript }))
  })
}

/**
 * The decisions of a resumed run by call id: each must be the approval id of
 * one of the calls it starts with, or nothing runs (`DecisionMismatch`).
 */
const decide = (
  decisions: ReadonlyMap<string, Decision>,
  calls: ReadonlyArray<Protocol.ToolCall>,
  transcript: Transcript.Transcript
): Effect.Effect<Decided, DecisionMismatch> => {
  if (decisions.size === 0) return Effect.succeed(undecided)
  return Effect.flatMap(Approvals.approvalIds(calls), (ids) => {
    const byApproval = new Map(ids.map((id, i) => [id, calls[i]!.id]))
    const decided = new Map<string, Decision>()
    for (const [approvalId, decision] of decisions) {
      const callId = byApproval.get(approvalId)
      if (callId === undefined) return Effect.fail(new DecisionMismatch({ approvalId, transcript }))
      decided.set(callId, decision)
    }
    return Effect.succeed(decided)
  })
}

/**
 * Runs from `transcript`: first the unanswered calls of its last assistant
 * message if any (a paused or interrupted run), then model calls until a stop.
 */
export const run = (
  settings: Settings,
  transcript: Transcript.Transcript
): Effect.Effect<AgentResult<unknown>, Failure, Requirements> =>
  inSpan(Telemetry.spanName("invoke_agent", settings.name), {
    kind: "internal",
    attributes: agentAttributes(settings),
    ...(settings.trace === undefined ? {} : { parent: Tracer.externalSpan(settings.trace) })
  }, (span) => {
    const open = Transcript.unansweredCalls(transcript)
    const started = (decided: Decided, startedAt: number) => {
      const state: State = {
        transcript,
        steps: [],
        modelCalls: 0,
        toolCalls: 0,
        startedAt,
        tokens: settings.priorUsage?.total_tokens ?? 0,
        trace: { traceId: span.traceId, spanId: span.spanId }
      }
      const progress: Progress = { transcript }
      const guards = guardsOf(settings)
      if (open === undefined) return withinDuration(settings, progress, loop(settings, guards, state, progress))
      const base = {
        index: 0,
        requestMessages: transcript.indexOf(open.message),
        message: open.message,
        usage: undefined,
        tokens: { total: 0, estimated: false },
        response: undefined
      }
      const resumed = inSpan("Agent.step", { attributes: { "agent.step": 0, "agent.resumed": true } }, () =>
        runCalls(settings, state, base, open.calls, decided))
      return withinDuration(settings, progress, Effect.flatMap(resumed, (next) => {
        if (next._tag === "Done") return Effect.succeed(next.result)
        progress.transcript = next.state.transcript
        return loop(settings, guards, next.state, progress)
      }))
    }
    return Effect.flatMapEager(decide(settings.decisions, open?.calls ?? [], transcript), (decided) =>
      Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
        Effect.map(started(decided, startedAt), (result) => {
          annotateRun(span, result)
          return result
        })))
  })

/**
 * How the run ended, on its span: its status (a paused run is no error, but
 * is not done) and its usage summed over its steps. The usage is under our
 * names: backends that add up `gen_ai.usage.*` across a trace would count
 * every call twice (the `chat` spans carry it).
 */
const annotateRun = (span: Tracer.Span, result: AgentResult<unknown>): void => {
  span.attribute("switchboard.agent.status", result.status)
  span.attribute("switchboard.agent.steps", result.steps.length)
  span.attribute("switchboard.agent.usage.input_tokens", result.usage.prompt_tokens)
  span.attribute("switchboard.agent.usage.output_tokens", result.usage.completion_tokens)
  span.attribute("switchboard.agent.usage.total_tokens", result.usage.total_tokens)
}

/** The run's span attributes, by the conventions for an agent invoked in process. */
const agentAttributes = (settings: Settings) => ({
  "gen_ai.operation.name": "invoke_agent",
  "gen_ai.provider.name": Telemetry.providerName,
  "gen_ai.request.model": settings.model,
  ...(settings.name === undefined ? {} : { "gen_ai.agent.name": settings.name })
})
