/**
 * Why a run stopped without an answer. Every error carries the transcript so
 * far, so that nothing is lost: it can be inspected, saved, or given to
 * `Agent.resume` (with a higher limit, say). A transcript may end with an
 * assistant message whose calls did not run; `resume` runs them first.
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { Transcript } from "./Transcript.js"

/**
 * The model still asked for tools after `maxSteps` model calls. The loop
 * never stops silently at its limit.
 *
 * @since 0.1.0
 * @category errors
 */
export class MaxStepsExceeded extends Schema.TaggedError<MaxStepsExceeded>()("MaxStepsExceeded", {
  maxSteps: Schema.Number,
  transcript: Transcript
}) {
  override get message(): string {
    return `the model still called tools after ${this.maxSteps} steps`
  }
}

/**
 * A limit of the run's budget was reached. `used` and `max` are tokens, tool
 * calls, or milliseconds.
 *
 * @since 0.1.0
 * @category errors
 */
export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>()("BudgetExceeded", {
  limit: Schema.Literals(["totalTokens", "toolCalls", "duration"]),
  max: Schema.Number,
  used: Schema.Number,
  transcript: Transcript
}) {
  override get message(): string {
    return `budget of ${this.limit} exceeded: ${this.used} used, ${this.max} allowed`
  }
}

/**
 * The model made the same call (tool name and arguments) `count` times since
 * the last user message. The repeated call did not run.
 *
 * @since 0.1.0
 * @category errors
 */
export class LoopDetected extends Schema.TaggedError<LoopDetected>()("LoopDetected", {
  tool: Schema.String,
  arguments: Schema.String,
  count: Schema.Number,
  transcript: Transcript
}) {
  override get message(): string {
    return `the model called ${this.tool}(${this.arguments}) ${this.count} times`
  }
}

/**
 * A handler died (threw, or failed outside its typed failure), or returned a
 * value its `success` schema cannot encode. A bug, not something to show the
 * model; the other calls of the step were interrupted.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolDefect extends Schema.TaggedError<ToolDefect>()("ToolDefect", {
  tool: Schema.String,
  callId: Schema.String,
  /** The defect, rendered. */
  defect: Schema.String,
  transcript: Transcript
}) {
  override get message(): string {
    return `tool ${this.tool} (call ${this.callId}) died: ${this.defect.split("\n")[0]}`
  }
}

/**
 * A decision given to `resume` is for no call awaiting one now: its key is
 * no unanswered call's `approvalId` (a call id, an id from another run, or
 * a call whose name or arguments differ from those the approver saw).
 * Nothing of the run ran.
 *
 * @since 1.1.0
 * @category errors
 */
export class DecisionMismatch extends Schema.TaggedError<DecisionMismatch>()("DecisionMismatch", {
  approvalId: Schema.String,
  transcript: Transcript
}) {
  override get message(): string {
    return `no unanswered call has the approval id ${JSON.stringify(this.approvalId.slice(0, 80))}: ` +
      "the decision is for another call, or for other arguments than those now pending"
  }
}

/**
 * Any of the agent's own errors: too many steps, a budget spent, a loop, or
 * a tool that died, or a decision for no pending call.
 *
 * @since 0.1.0
 * @category errors
 */
export type AgentError = MaxStepsExceeded | BudgetExceeded | LoopDetected | ToolDefect | DecisionMismatch

const tags: ReadonlySet<string> = new Set([
  "MaxStepsExceeded",
  "BudgetExceeded",
  "LoopDetected",
  "ToolDefect",
  "DecisionMismatch"
])

/**
 * Whether a value is one of the agent's own errors (an `AgentError`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isAgentError = (u: unknown): u is AgentError =>
  Predicate.hasProperty(u, "_tag") && typeof u._tag === "string" && tags.has(u._tag)
