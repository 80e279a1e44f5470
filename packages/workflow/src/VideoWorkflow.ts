/**
 * A video task as a durable workflow: the submission is an activity (its
 * result, the task id, is stored before anything else happens, so a runner
 * that crashes afterwards never submits again), then status polls are
 * activities with a `DurableClock` sleep between them, on the same schedule
 * and deadline as `Videos.poll`, ending in the same typed results.
 *
 * A runner that dies after sending the submission and before its result is
 * stored leaves the outcome unknown (the service has no idempotency key). By
 * default (`submission: "at-most-once"`) the intent to submit is stored
 * first, and a replay that finds it without a result ends the workflow in
 * `SubmissionOutcomeUnknownError` rather than paying a second time;
 * `"at-least-once"` submits again instead.
 *
 * The workflow is keyed by an idempotency key: starting it twice with one key
 * gives the one task.
 *
 * @since 0.1.0
 */
import { isTransient, type SwitchboardError, TaskFailedError, TaskTimeoutError } from "@switchboard/core/SwitchboardError"
import * as TaskPoller from "@switchboard/core/TaskPoller"
import * as Videos from "@switchboard/core/Videos"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import * as DurableClock from "effect/workflow/DurableClock"
import * as Workflow from "effect/workflow/Workflow"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import { createHash } from "node:crypto"
import { whileOwned } from "./internal/handover.js"
import * as MessageStorage from "./internal/messageStorage.js"
import * as Schemas from "./internal/schemas.js"

/**
 * What a finished workflow gives: the task and its video.
 *
 * @since 0.1.0
 * @category models
 */
export const Video = Schema.Struct({ taskId: Schema.String, videoUrl: Schema.String })

/**
 * What a finished workflow gives: the task and its video.
 *
 * @since 0.1.0
 * @category models
 */
export type Video = typeof Video.Type

/**
 * `Videos.SubmitRequest` unchecked: the submission activity checks it, so a
 * bad request ends the workflow in `InvalidRequestError` naming the field,
 * before anything is sent, instead of throwing from `execute`.
 */
const Request = Schema.Struct({
  model: Schema.String,
  prompt: Schema.String,
  image: Schema.optional(Schema.String),
  max_tokens: Schema.optional(Schema.Number)
})

/** The intent to submit, stored before the request is sent: when it was about to be. */
const Intent = Schema.Struct({ at: Schema.Number })

/**
 * What a replay does with a submission whose result was not stored (its
 * runner died after sending it, or may have: the service's answer is lost):
 *
 * - `"at-most-once"` (default): the intent is stored before sending, and a
 *   run that finds it without a result fails in
 *   `SubmissionOutcomeUnknownError`, never sending again. A task may then
 *   exist (and be paid for) that no workflow follows; none is paid twice.
 * - `"at-least-once"`: the request is sent again. No task is lost; one may be
 *   made (and paid for) twice, the first never followed.
 *
 * @since 1.1.0
 * @category models
 */
export type Submission = "at-most-once" | "at-least-once"

const SubmissionSchema = Schema.Literals(["at-most-once", "at-least-once"])

/**
 * The workflow stored an intent to submit and no result: a runner sent the
 * submission, or was about to, and stopped before the service's answer was
 * stored. The service may have made the task (and charged for it) or not;
 * its id is unknown. Nothing was sent again (`submission: "at-most-once"`).
 *
 * `request` and `sentAt` (epoch milliseconds, taken just before sending)
 * are what to look for at the service; see docs/fleet.md, "When a
 * submission's outcome is unknown".
 *
 * @since 1.1.0
 * @category errors
 */
export class SubmissionOutcomeUnknownError extends Schema.TaggedError<SubmissionOutcomeUnknownError>()(
  "SubmissionOutcomeUnknownError",
  {
    message: Schema.String,
    /** The workflow's key. */
    key: Schema.String,
    request: Request,
    /** When the submission was about to be sent (epoch milliseconds). */
    sentAt: Schema.Number
  }
) {}

/**
 * What the workflow fails with: a `SwitchboardError` or, at most once, a
 * submission whose outcome is unknown.
 *
 * @since 1.1.0
 * @category errors
 */
export type VideoWorkflowError = SwitchboardError | SubmissionOutcomeUnknownError

const WorkflowError = Schema.Union([Schemas.SwitchboardError, SubmissionOutcomeUnknownError])

/**
 * The workflow: payload `{ key, request, submission? }`, success `Video`,
 * failure any `SwitchboardError` (`TaskFailedError`, `TaskTimeoutError`, or
 * the submission's or a status call's error once its retries are spent) or
 * `SubmissionOutcomeUnknownError`.
 *
 * @since 0.1.0
 * @category workflows
 */
export const VideoWorkflow = Workflow.make("Switchboard/Video", {
  payload: { key: Schema.String, request: Request, submission: Schema.optional(SubmissionSchema) },
  success: Video,
  error: WorkflowError,
  idempotencyKey: ({ key }) => key
})

/**
 * The key of a request when the caller gives none: the same request is the
 * same task. A digest, short enough to show and type again (`resume --key`)
 * whatever the request holds (an image as a data URI).
 *
 * @since 0.1.0
 * @category keys
 */
export const keyOf = (request: Videos.SubmitRequest): string =>
  `video-${
    createHash("sha256").update(JSON.stringify([request.model, request.prompt, request.image ?? null, request.max_tokens ?? null]))
      .digest("hex").slice(0, 24)
  }`

const Submitted = Schema.Struct({ taskId: Schema.String, submittedAt: Schema.Number })


/**
 * The wait after poll `n` (from 0), or none when the schedule stops there:
 * the schedule stepped `n + 1` times, each step at the time the waits before
 * it end (what a schedule bounded in time, `Schedule.during`, counts).
 */
const waitAfter = Effect.fnUntraced(function*(schedule: Schedule.Schedule<unknown>, n: number) {
  const step = yield* Schedule.toStep(schedule)
  let now = 0
  let wait: Option.Option<Duration.Duration> = Option.none()
  for (let i = 0; i <= n; i++) {
    wait = yield* Pull.catchDone(
      Effect.map(step(now, undefined), ([, delay]) => Option.some(delay)),
      () => Effect.succeedNone
    )
    if (Option.isNone(wait)) return wait
    now += Duration.toMillis(wait.value)
  }
  return wait
})

const failed = (update: Extract<TaskPoller.TaskUpdate, { _tag: "Failed" }>) =>
  new TaskFailedError({
    message: `task ${update.taskId} failed${update.reason ? `: ${update.reason}` : ""}`,
    taskId: update.taskId,
    ...(update.reason ? { reason: update.reason } : {})
  })

const timedOut = (taskId: string, deadline: Duration.Duration, lastStatus: string, why: string) =>
  new TaskTimeoutError({ message: `task ${taskId} ${why} within ${Duration.format(deadline)}`, taskId, lastStatus })

/**
 * Options of the runner's workflow: `Videos.poll`'s (schedule, deadline from
 * the submission, status retries), and what a replay does with a submission
 * whose result was not stored, for workflows started without choosing.
 *
 * @since 1.1.0
 * @category models
 */
export interface Options extends TaskPoller.PollOptions<SwitchboardError> {
  /** Default `"at-most-once"`; a workflow started with `StartOptions.submission` keeps its own. */
  readonly submission?: Submission | undefined
}

/** `DurableClock.sleep`'s own threshold: waits up to this are in memory there too. */
const inMemoryWait = Duration.seconds(60)

/**
 * The workflow's body, for the runner.
 */
const body = (options: Options) => {
  const schedule = options.schedule ?? TaskPoller.defaultSchedule
  const deadline = Duration.fromInputUnsafe(options.deadline ?? "10 minutes")
  const isRetryable = options.isRetryable ?? isTransient
  const statusRetry = options.statusRetry ?? TaskPoller.defaultStatusRetry

  return (
    payload: { readonly key: string; readonly request: Videos.SubmitRequest; readonly submission?: Submission | undefined }
  ) =>
    Effect.gen(function*() {
      const videos = yield* Videos.Videos
      const submission = payload.submission ?? options.submission ?? "at-most-once"
      const send = Effect.zipWith(videos.submit(payload.request), Clock.currentTimeMillis, (taskId, submittedAt) => ({
        taskId,
        submittedAt
      }))
      let execute: Effect.Effect<typeof Submitted.Type, VideoWorkflowError> = send
      if (submission === "at-most-once") {
        // The intent is stored before anything is sent. This run may send only
        // if it stored the intent itself, once: a run that finds the intent
        // already stored (a replay after its runner died), or an activity run
        // again in this process, may follow a submission the service received.
        let mayAnswer = false
        const intent = yield* Activity.make({
          name: "submit-intent",
          success: Intent,
          execute: Effect.map(Clock.currentTimeMillis, (at) => {
            mayAnswer = true
            return { at }
          })
        })
        execute = Effect.suspend((): Effect.Effect<typeof Submitted.Type, VideoWorkflowError> => {
          if (!mayAnswer) {
            return Effect.fail(
              new SubmissionOutcomeUnknownError({
                message: `the submission of video workflow ${payload.key} may have reached the service: it was about to be sent at ${
                  new Date(intent.at).toISOString()
                } and its result was not stored (its runner stopped). It was not sent again and its task id is unknown: look for a ${payload.request.model} task made then at the service, and start the request again under a new key only if there is none`,
                key: payload.key,
                request: payload.request,
                sentAt: intent.at
              })
            )
          }
          mayAnswer = false
          return send
        })
      }
      const { submittedAt, taskId } = yield* Activity.make({
        name: "submit",
        success: Submitted,
        error: WorkflowError,
        // Not interruptible: a runner handing its shards over (or shutting down)
        // waits for a submission that may have reached the service, and stores
        // its task id, rather than leaving the next runner an unknown outcome.
        execute: Effect.uninterruptible(execute)
      })
      // The workflow's storage holds the task now. The plain journal's record
      // covered the time from the service's answer to then; left, any
      // program's `Videos.resumePending` would follow the task a second time.
      yield* Effect.catch(videos.complete(taskId), (error) =>
        Effect.logWarning(`task ${taskId} stays in the task journal: ${error.message}`))
      const status = Effect.retry(videos.status(taskId), { schedule: statusRetry, while: isRetryable })

      // The wait before a poll, when short, is inside that poll's activity:
      // one stored message and reply per poll instead of two (a
      // `DurableClock.sleep` this short is an activity of its own). A replay
      // of an unfinished poll waits again, as the clock's activity did.
      // Longer waits stay on the durable clock: no runner holds them.
      const poll = (
        n: number,
        before: Duration.Duration | undefined
      ): Effect.Effect<Video, VideoWorkflowError, Videos.Videos | WorkflowEngine | WorkflowInstance> =>
        Effect.gen(function*() {
          // Checked before each poll and while it is waited for: a poll never
          // holds its shard once this runner hands the shard over (internal/handover.ts).
          const update = yield* whileOwned(Activity.make({
            name: `status-${n}`,
            success: Schemas.TaskUpdate,
            error: Schemas.SwitchboardError,
            execute: before === undefined ? status : Effect.andThen(Effect.sleep(before), status)
          }))
          if (update._tag === "Succeeded") return { taskId, videoUrl: update.videoUrl }
          if (update._tag === "Failed") return yield* failed(update)
          const wait = yield* waitAfter(schedule, n)
          if (Option.isNone(wait)) return yield* timedOut(taskId, deadline, update.status, "ran out of polls by the schedule")
          const left = submittedAt + Duration.toMillis(deadline) - (yield* Clock.currentTimeMillis)
          // As `Videos.poll`: a wait that would cross the deadline ends at it, in `TaskTimeoutError`.
          if (left <= Duration.toMillis(wait.value)) {
            yield* whileOwned(DurableClock.sleep({ name: `wait-${n}`, duration: Math.max(0, left) }))
            return yield* timedOut(taskId, deadline, update.status, "did not finish")
          }
          if (Duration.isGreaterThan(wait.value, inMemoryWait)) {
            yield* whileOwned(DurableClock.sleep({ name: `wait-${n}`, duration: wait.value }))
            return yield* poll(n + 1, undefined)
          }
          return yield* poll(n + 1, wait.value)
        })

      return yield* poll(0, undefined)
    })
}

/**
 * Registers the workflow with the engine: what a runner provides. `options`
 * are those of `Videos.poll` (the deadline counts from the submission) and
 * the default `submission` (`"at-most-once"`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<never, never, WorkflowEngine | Videos.Videos> => VideoWorkflow.toLayer(body(options))

/**
 * What `start` takes: the workflow's key and what a replay does with an
 * unrecorded submission.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartOptions {
  /** Default: `keyOf(request)`. */
  readonly key?: string | undefined
  /**
   * What a replay does with a submission whose result was not stored, kept
   * with the workflow (whichever runner replays it). Default: the runner's
   * `Options.submission`, itself `"at-most-once"` by default.
   *
   * @since 1.1.0
   */
  readonly submission?: Submission | undefined
}

const payloadOf = (request: Videos.SubmitRequest, options: StartOptions = {}) => ({
  key: options.key ?? keyOf(request),
  request,
  ...(options.submission === undefined ? {} : { submission: options.submission })
})

/**
 * Starts the workflow (or finds the one with this key) and returns its
 * execution id at once.
 *
 * @since 0.1.0
 * @category running
 */
export const start = (request: Videos.SubmitRequest, options?: StartOptions): Effect.Effect<string, never, WorkflowEngine> =>
  VideoWorkflow.execute(payloadOf(request, options), { discard: true })

/**
 * Starts the workflow (or joins the one with this key) and waits for its end.
 *
 * @since 0.1.0
 * @category running
 */
export const generate = (
  request: Videos.SubmitRequest,
  options?: StartOptions
): Effect.Effect<Video, VideoWorkflowError, WorkflowEngine> => VideoWorkflow.execute(payloadOf(request, options))

/**
 * The result of the workflow with this key: `undefined` when it never ran,
 * `Suspended` while it waits, `Complete` with its exit at the end. A
 * workflow whose stored message could not be read, and was set aside, is
 * `Complete` with a defect that says so.
 *
 * @since 0.1.0
 * @category running
 */
export const result = (key: string) =>
  VideoWorkflow.executionId({ key, request: { model: "-", prompt: "-" } }).pipe(
    Effect.flatMap((id) => MessageStorage.pollSettled(VideoWorkflow.poll(id))),
    Effect.map(Option.getOrUndefined)
  )
