/**
 * An agent run from `@switchboard/agent` as a durable workflow: each model
 * call is an activity (`step-N/model`) and each tool call one
 * (`step-N/tool/{callId}`), so a run resumed on another runner repeats
 * nothing that finished. A call that needs approval pauses the run in a
 * durable wait: the decisions are given with `decide`, from any process, and
 * the run goes on wherever the workflow lives then. The token `decide` takes
 * names a wait that holds a secret drawn at random when the run paused (and
 * stored with it): knowing the run's key is not enough to decide.
 *
 * @since 0.1.0
 */
import * as Agent from "@switchboard/agent/Agent"
import * as AgentError from "@switchboard/agent/AgentError"
import { Transcript } from "@switchboard/agent/Transcript"
import * as Protocol from "@switchboard/core/Protocol"
import { duration } from "@switchboard/core/SwitchboardConfig"
import { InvalidRequestError, type SwitchboardError } from "@switchboard/core/SwitchboardError"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import * as DurableClock from "effect/workflow/DurableClock"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as Workflow from "effect/workflow/Workflow"
import * as Crypto from "node:crypto"
import { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import { whileOwned } from "./internal/handover.js"
import * as MessageStorage from "./internal/messageStorage.js"
import * as Schemas from "./internal/schemas.js"

/**
 * How a run ended: `completed` or `stopped` (paused runs wait, they do not end).
 *
 * @since 0.1.0
 * @category models
 */
export const Outcome = Schema.Struct({
  status: Schema.Literals(["completed", "stopped"]),
  text: Schema.String,
  transcript: Transcript
})

/**
 * How a run ended: `completed` or `stopped` (paused runs wait, they do not
 * end).
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = typeof Outcome.Type

/**
 * Decisions by approval id (`Agent.PendingApproval.approvalId`).
 *
 * @since 0.1.0
 * @category models
 */
export const Decisions = Schema.Record(Schema.String, Agent.Decision)

/**
 * What `onApproval` is told when a run pauses: the calls to decide on, and
 * the token that `decide` takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApprovalRequest {
  readonly key: string
  readonly token: string
  readonly pending: ReadonlyArray<Agent.PendingApproval>
}

const ToolResult = Schema.Struct({
  callId: Schema.String,
  name: Schema.String,
  arguments: Schema.String,
  outcome: Schema.Literals(["success", "failure", "invalid-arguments", "unknown-tool", "timeout", "denied"]),
  content: Schema.String
})

const RunError = Schema.Union([
  Schemas.SwitchboardError,
  AgentError.MaxStepsExceeded,
  AgentError.BudgetExceeded,
  AgentError.LoopDetected,
  AgentError.ToolDefect,
  AgentError.DecisionMismatch
])

/**
 * What an agent workflow takes: its name, how a pause is told, and the
 * options of `Agent.run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<T extends Agent.AnyTools> extends Omit<Agent.RunOptions<T>, "messages" | "intercept" | "model"> {
  /** The workflow's name: one per agent. */
  readonly name: string
  /**
   * Told when a run pauses: send the request to whoever decides. An activity:
   * once its end is stored it never runs again, but a runner that dies
   * between its end and that write leaves it to run again on the next one.
   * Default: nothing.
   */
  readonly onApproval?: ((request: ApprovalRequest) => Effect.Effect<void>) | undefined
  /**
   * How often a paused run looks for its decisions besides being woken by
   * them. Default 1 minute.
   */
  readonly recheck?: Duration.Input | undefined
}

/**
 * Makes the workflow of one agent: its `layer` (for runners), and `start`,
 * `decide`, `result` (for anyone).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <T extends Agent.AnyTools, K extends Agent.AnyToolkit<T> = Agent.AnyToolkit<T>>(
  options: Options<T> & { readonly toolkit: K }
) => {
  const workflow = Workflow.make(options.name, {
    payload: { key: Schema.String, model: Schema.String, messages: Transcript },
    success: Outcome,
    error: RunError,
    idempotencyKey: ({ key }) => key
  })
  // Checked where it enters: a bad one is a `ConfigurationError` naming it, thrown by `make`.
  const recheck = Result.getOrThrow(duration("recheck", options.recheck ?? "1 minute"))
  /** The wait of pause `round`, its name holding the round's secret: what makes its token unguessable. */
  const approvals = (name: string) => DurableDeferred.make(name, { success: Decisions })
  const prefix = "approval-"
  /** A secret per pause, drawn once: an activity's result is stored, so a replay gets the same. */
  const secret = (round: number) =>
    whileOwned(Activity.make({
      name: `approval-${round}/secret`,
      success: Schema.String,
      execute: Effect.sync(() => `${prefix}${round}-${Crypto.randomBytes(32).toString("base64url")}`)
    }))

  /**
   * Each model and tool call as an activity, numbered from `first` (the runs
   * of one workflow count on). A run waiting on one (or on a pause's secret
   * or approval request) lets its shard go once this runner hands it over
   * (internal/handover.ts).
   */
  const intercept = (first: number, context: WorkflowContext): Agent.Interceptor => ({
    model: (step, call) =>
      Effect.provide(
        whileOwned(
          Activity.make({ name: `step-${first + step}/model`, success: Protocol.ChatCompletion, error: Schemas.SwitchboardError, execute: call })
        ),
        context
      ) as typeof call,
    tool: (step, callId, call) =>
      Effect.provide(
        whileOwned(
          Activity.make({ name: `step-${first + step}/tool/${callId}`, success: ToolResult, error: AgentError.ToolDefect, execute: call })
        ),
        context
      ) as typeof call
  })

  /** The decisions of pause `round`, once given; looks again every `recheck` in between. */
  const awaitDecisions = (
    round: number,
    name: string,
    check = 0
  ): Effect.Effect<typeof Decisions.Type, never, WorkflowEngine | WorkflowInstance> =>
    Effect.gen(function*() {
      const engine = yield* WorkflowEngine
      const exit = yield* engine.deferredResult(approvals(name))
      if (Option.isSome(exit) && Exit.isSuccess(exit.value)) return exit.value.value
      yield* DurableClock.sleep({ name: `approval-${round}/wait-${check}`, duration: recheck, inMemoryThreshold: Duration.zero })
      return yield* awaitDecisions(round, name, check + 1)
    })

  const body = (payload: typeof workflow.payloadSchema.Type) =>
    Effect.gen(function*() {
      const context = yield* Effect.context<WorkflowEngine | WorkflowInstance>()
      const settings = { ...options, model: payload.model }
      let result = yield* Agent.run({ ...settings, messages: payload.messages, intercept: intercept(0, context) })
      let modelCalls = result.steps.length
      for (let round = 0; result.status === "paused"; round++) {
        const name = yield* secret(round)
        const token = yield* DurableDeferred.token(approvals(name))
        const onApproval = options.onApproval
        if (onApproval !== undefined) {
          yield* whileOwned(Activity.make({
            name: `approval-${round}/request`,
            execute: onApproval({ key: payload.key, token, pending: result.pending })
          }))
        }
        const decisions = yield* awaitDecisions(round, name)
        // The resumed run's step 0 is the paused step: its calls run under its number.
        const first = modelCalls - 1
        result = yield* Agent.resume({
          ...settings,
          transcript: result.transcript,
          usage: result.usage,
          decisions,
          intercept: intercept(first, context)
        })
        modelCalls = first + result.steps.length
      }
      return { status: result.status === "stopped" ? "stopped" : "completed", text: result.text, transcript: result.transcript } as const
    })

  const payloadOf = (key: string, model: string, messages: ReadonlyArray<Protocol.Message>) => ({ key, model, messages })

  return {
    workflow,
    /** Registers the workflow on a runner, with `Chat` and the toolkit's handlers (unless it carries them) from context. */
    layer: workflow.toLayer(body) as Layer.Layer<never, never, WorkflowEngine | Agent.RequirementsOf<T, K>>,
    /** Starts the run with this key (or finds it); returns at once. */
    start: (key: string, model: string, messages: ReadonlyArray<Protocol.Message>) =>
      workflow.execute(payloadOf(key, model, messages), { discard: true }),
    /** Starts the run with this key (or joins it) and waits for its end. */
    run: (key: string, model: string, messages: ReadonlyArray<Protocol.Message>) =>
      workflow.execute(payloadOf(key, model, messages)) as Effect.Effect<Outcome, SwitchboardError | AgentError.AgentError, WorkflowEngine>,
    /**
     * Gives the decisions a paused run waits for (`token` from `onApproval`).
     * A token that is not one of this workflow's approval tokens fails with
     * an `InvalidRequestError` naming `token`.
     */
    decide: (token: string, decisions: typeof Decisions.Type) =>
      Effect.flatMap(parseToken(token), (parsed) =>
        parsed.workflowName === options.name && parsed.deferredName.startsWith(prefix)
          ? DurableDeferred.succeed(approvals(parsed.deferredName), { token: DurableDeferred.Token.make(token), value: decisions })
          : Effect.fail(badToken)),
    /**
     * The run's result: `undefined` before it starts, `Suspended` while it
     * waits, `Complete` at the end (with a defect that says so for a run whose
     * stored message could not be read and was set aside).
     */
    result: (key: string) =>
      workflow.executionId(payloadOf(key, "-", [])).pipe(
        Effect.flatMap((id) => MessageStorage.pollSettled(workflow.poll(id))),
        Effect.map(Option.getOrUndefined)
      )
  }
}

type WorkflowContext = Context.Context<WorkflowEngine | WorkflowInstance>

const badToken = new InvalidRequestError({ field: "token", message: "token is not an approval token of this agent's runs" })

const parseToken = (token: string) =>
  Effect.mapError(Schema.decodeUnknownEffect(DurableDeferred.TokenParsed.FromString)(token), () => badToken)
