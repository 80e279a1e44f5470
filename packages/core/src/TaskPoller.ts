/**
 * The pure program behind video polling: a status effect, a `Schedule` and a
 * deadline become a `Stream` of updates that ends after the terminal one.
 * Nothing here knows HTTP; `Videos.poll` supplies the status effect.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Checks from "./internal/checks.js"
import { tapEach } from "./internal/tapEach.js"
import { type ConfigurationError, TaskTimeoutError } from "./SwitchboardError.js"

/**
 * One observation of a task. `InProgress` keeps the raw state as it came
 * (`queued`, `processing`, or any value the service invents) and `progress`
 * (0–100) when the service gave one.
 *
 * @since 0.1.0
 * @category models
 */
export type TaskUpdate = Data.TaggedEnum<{
  InProgress: { readonly taskId: string; readonly status: string; readonly progress?: number | undefined }
  Succeeded: { readonly taskId: string; readonly videoUrl: string }
  /** `body`: the status reply, as JSON text (start only, secrets redacted). */
  Failed: { readonly taskId: string; readonly reason?: string | undefined; readonly body?: string | undefined }
}>

/**
 * Constructors and matchers: `TaskUpdate.InProgress({...})`, `$is("Succeeded")`, `$match`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const TaskUpdate = /* @__PURE__ */ Data.taggedEnum<TaskUpdate>()

/**
 * Whether an update ends its task: it succeeded or failed.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTerminal = (update: TaskUpdate): boolean => update._tag !== "InProgress"

/**
 * The default wait between status calls: exponential from 1 s, doubling,
 * capped at 15 s, jittered.
 *
 * @since 0.1.0
 * @category schedules
 */
export const defaultSchedule: Schedule.Schedule<unknown> = /* @__PURE__ */ Schedule.jittered(
  /* @__PURE__ */ Schedule.min([/* @__PURE__ */ Schedule.exponential("1 second"), /* @__PURE__ */ Schedule.spaced("15 seconds")])
)

/**
 * How long a task is polled by default before `TaskTimeoutError`.
 *
 * @since 0.1.0
 * @category schedules
 */
export const defaultDeadline: Duration.Duration = /* @__PURE__ */ Duration.minutes(10)

/**
 * The default budget for failed status calls within one poll: 5 retries with
 * backoff from 1 s. A poll only fails when a status call keeps failing past it.
 *
 * @since 0.1.0
 * @category schedules
 */
export const defaultStatusRetry: Schedule.Schedule<unknown> = /* @__PURE__ */ Schedule.upTo(
  /* @__PURE__ */ Schedule.min([/* @__PURE__ */ Schedule.exponential("1 second"), /* @__PURE__ */ Schedule.spaced("15 seconds")]),
  { times: 5 }
)

/**
 * How a task is polled: the wait between status calls, the overall deadline
 * and the retries of a failed status call.
 *
 * @since 0.1.0
 * @category models
 */
export interface PollOptions<E = never> {
  /** Wait between status calls. Default `defaultSchedule`. */
  readonly schedule?: Schedule.Schedule<unknown> | undefined
  /** Overall limit; past it the stream fails with `TaskTimeoutError`. Default 10 minutes. */
  readonly deadline?: Duration.Input | undefined
  /** Retries of a failed status call within the poll. Default `defaultStatusRetry`. */
  readonly statusRetry?: Schedule.Schedule<unknown, E> | undefined
  /** Which status failures are worth retrying. Default: all. */
  readonly isRetryable?: ((error: E) => boolean) | undefined
}

/**
 * Polls `status` now and then on `schedule` until a terminal update, emitting
 * every update. Ends after the terminal update; fails with `TaskTimeoutError`
 * at the deadline (the task may still finish: poll it again later).
 * Interrupting the stream stops polling at once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const poll = <E>(
  taskId: string,
  status: Effect.Effect<TaskUpdate, E>,
  options: PollOptions<E> = {}
): Stream.Stream<TaskUpdate, E | TaskTimeoutError | ConfigurationError> =>
  Result.match(Checks.duration("deadline", options.deadline ?? defaultDeadline), {
    onFailure: (error) => Stream.fail(error),
    onSuccess: (deadline) => pollUntil(taskId, status, options, deadline)
  })

const pollUntil = <E>(
  taskId: string,
  status: Effect.Effect<TaskUpdate, E>,
  options: PollOptions<E>,
  deadline: Duration.Duration
): Stream.Stream<TaskUpdate, E | TaskTimeoutError> => {
  const isRetryable = options.isRetryable ?? (() => true)
  const resilientStatus = Effect.retry(status, {
    schedule: options.statusRetry ?? defaultStatusRetry,
    while: isRetryable
  })
  let last: string | undefined
  const timedOut = Effect.suspend(() =>
    Effect.fail(
      new TaskTimeoutError({
        message: `task ${taskId} did not finish within ${Duration.format(deadline)}`,
        taskId,
        ...(last === undefined ? {} : { lastStatus: last })
      })
    )
  )
  const updates = tapEach(
    Stream.fromEffectSchedule(resilientStatus, options.schedule ?? defaultSchedule),
    (update) => Effect.sync(() => (last = update._tag === "InProgress" ? update.status : update._tag))
  )
  return Stream.takeUntil(until(updates, deadline, timedOut), isTerminal)
}

/**
 * Fails with `timedOut` once `deadline` has passed since the stream began:
 * each read (a status call with its retries, or the wait before it) is cut
 * at the time left. What `Stream.interruptWhen` does with a sleep, without
 * its merge of fibers, which a page would carry for the poll alone.
 */
const until = <A, E, E2>(
  self: Stream.Stream<A, E>,
  deadline: Duration.Duration,
  timedOut: Effect.Effect<never, E2>
): Stream.Stream<A, E | E2> => {
  if (!Duration.isFinite(deadline)) return self
  return Stream.transformPull(self, (pull) =>
    Effect.map(Clock.currentTimeMillis, (start) => {
      const end = start + Duration.toMillis(deadline)
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        now >= end ? timedOut : Effect.timeoutOrElse(pull, { duration: Duration.millis(end - now), orElse: () => timedOut }))
    }))
}
