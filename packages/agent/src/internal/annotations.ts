/**
 * What the agent reads from an `effect/ai` tool's annotations beyond what
 * `Tool` has: how long one call may take and how its failures are retried.
 *
 * @internal
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Schedule from "effect/Schedule"

/** The limit for one call, retries included. */
export class ToolTimeout extends Context.Service<ToolTimeout, Duration.Input>()("@switchboard/agent/Agent/ToolTimeout") {}

/** A schedule over the handler's typed failure. */
export class ToolRetry extends Context.Service<ToolRetry, Schedule.Schedule<unknown, never>>()(
  "@switchboard/agent/Agent/ToolRetry"
) {}
