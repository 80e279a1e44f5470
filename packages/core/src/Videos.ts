/**
 * Video generation as an asynchronous task (spec 3, 4.1 use 4, 4.3): submit
 * through chat with a video model, then poll `POST /v1/chat/task/status`
 * until `succeed` or `failed`. Submitted tasks are kept in the `TaskJournal`
 * until they end, so none is lost across a restart.
 *
 * @since 0.1.0
 */
import * as Brand from "effect/Brand"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Json from "./internal/json.js"
import { encoder, plainDecoder } from "./internal/validate.js"
import * as Protocol from "./Protocol.js"
import {
  isTransient,
  JournalError,
  ResponseDecodeError,
  TaskFailedError,
  type SwitchboardError
} from "./SwitchboardError.js"
import * as TaskJournal from "./TaskJournal.js"
import * as TaskPoller from "./TaskPoller.js"
import { Transport, truncate } from "./Transport.js"

/**
 * The id of a video task: the `id` of the submission's response.
 *
 * @since 0.1.0
 * @category models
 */
export type TaskId = string & Brand.Brand<"TaskId">
/**
 * @since 0.1.0
 * @category constructors
 */
export const TaskId = Brand.nominal<TaskId>()

/**
 * @since 0.1.0
 * @category models
 */
export const SubmitRequest = Schema.Struct({
  model: Protocol.NonEmptyString,
  prompt: Protocol.NonEmptyString,
  /** For image-to-video: an http(s) URL or a data URI (see `Attachment`). */
  image: Schema.optional(Protocol.ImageAddress),
  /** Default 3000, the value the service's examples use. */
  max_tokens: Schema.optional(Protocol.PositiveInt)
})
/**
 * @since 0.1.0
 * @category models
 */
export type SubmitRequest = typeof SubmitRequest.Type

/**
 * @since 0.1.0
 * @category models
 */
export type Succeeded = Extract<TaskPoller.TaskUpdate, { _tag: "Succeeded" }>

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly submit: (request: SubmitRequest) => Effect.Effect<TaskId, SwitchboardError>
  readonly status: (taskId: string) => Effect.Effect<TaskPoller.TaskUpdate, SwitchboardError>
  readonly poll: (
    taskId: string,
    options?: TaskPoller.PollOptions<SwitchboardError>
  ) => Stream.Stream<TaskPoller.TaskUpdate, SwitchboardError>
  readonly generate: (
    request: SubmitRequest,
    options?: TaskPoller.PollOptions<SwitchboardError>
  ) => Effect.Effect<Succeeded, SwitchboardError>
  readonly resumePending: (
    options?: TaskPoller.PollOptions<SwitchboardError>
  ) => Effect.Effect<ReadonlyArray<Pending>, SwitchboardError>
}

/**
 * A task found in the journal, with the stream that polls it to its end.
 *
 * @since 0.1.0
 * @category models
 */
export interface Pending {
  readonly entry: TaskJournal.Entry
  readonly updates: Stream.Stream<TaskPoller.TaskUpdate, SwitchboardError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Videos extends Context.Tag("@switchboard/core/Videos")<Videos, Service>() {}

const validateSubmit = encoder(SubmitRequest)
const encodeChat = encoder(Protocol.ChatRequest)
const decodeCompletion = plainDecoder(Protocol.ChatCompletion)
const decodeStatus = plainDecoder(Protocol.TaskStatusResponse)

const chatRequestOf = (request: SubmitRequest): Protocol.ChatRequest => ({
  model: request.model,
  max_tokens: request.max_tokens ?? 3000,
  messages: [{
    role: "user",
    content: request.image === undefined
      ? request.prompt
      : [{ type: "text", text: request.prompt }, { type: "image_url", image_url: { url: request.image } }]
  }]
})

/** `failed` carries its reason in whichever field (and shape) the service chose. */
const reasonOf = (response: Protocol.TaskStatusResponse): string | undefined =>
  [response.reason, response.fail_reason, response.error, response.message]
    .map((field) => Json.serviceError({ error: field })?.message)
    .find((reason) => reason !== undefined)

const updateOf = (
  taskId: string,
  response: Protocol.TaskStatusResponse,
  redact: (text: string) => string
): Effect.Effect<TaskPoller.TaskUpdate, ResponseDecodeError> => {
  switch (response.status) {
    case "succeed":
      return response.video_url
        ? Effect.succeed(TaskPoller.TaskUpdate.Succeeded({ taskId, videoUrl: response.video_url }))
        : Effect.fail(new ResponseDecodeError({ message: `task ${taskId} succeeded without a video_url`, body: JSON.stringify(response) }))
    case "failed": {
      const reason = reasonOf(response)
      return Effect.succeed(TaskPoller.TaskUpdate.Failed({
        taskId,
        reason: reason === undefined ? undefined : redact(truncate(reason, 1000)),
        body: redact(truncate(JSON.stringify(response), 1000))
      }))
    }
    default:
      return Effect.succeed(TaskPoller.TaskUpdate.InProgress({ taskId, status: response.status, progress: response.progress }))
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const transport = yield* Transport
  const journal = yield* TaskJournal.TaskJournal

  const submit = (request: SubmitRequest) =>
    Effect.gen(function*() {
      yield* validateSubmit(request)
      const body = yield* encodeChat(chatRequestOf(request))
      const completion = yield* transport.call({
        method: "POST",
        path: "/chat/completions",
        body,
        decode: decodeCompletion,
        span: "Switchboard.Videos.submit",
        model: request.model,
        // A duplicate task costs money: only retried when it surely was not received.
        retry: "unsent"
      })
      const taskId = TaskId(completion.id)
      const submittedAt = yield* Clock.currentTimeMillis
      yield* journal.record({ taskId, model: request.model, prompt: request.prompt.slice(0, 200), submittedAt }).pipe(
        Effect.mapError((e) => new JournalError({ message: `task ${taskId} was submitted but not recorded: ${e.message}`, taskId }))
      )
      return taskId
    })

  const status = (taskId: string) =>
    Effect.flatMap(
      transport.call({
        method: "POST",
        path: "/chat/task/status",
        body: { [transport.config.taskIdField]: taskId },
        decode: decodeStatus,
        span: "Switchboard.Videos.status"
      }),
      (response) => updateOf(taskId, response, transport.redact)
    )

  const poll = (taskId: string, options: TaskPoller.PollOptions<SwitchboardError> = {}) =>
    TaskPoller.poll(taskId, status(taskId), { isRetryable: isTransient, ...options }).pipe(
      Stream.tap((update) => (TaskPoller.isTerminal(update) ? journal.remove(taskId) : Effect.void))
    )

  const finish = (taskId: string, options?: TaskPoller.PollOptions<SwitchboardError>) =>
    Effect.flatMap(Stream.runLast(poll(taskId, options)), (last) =>
      last._tag === "Some" && last.value._tag === "Succeeded"
        ? Effect.succeed(last.value)
        : Effect.fail(
          new TaskFailedError({
            message: `task ${taskId} failed${last._tag === "Some" && last.value._tag === "Failed" && last.value.reason ? `: ${last.value.reason}` : ""}`,
            taskId,
            ...(last._tag === "Some" && last.value._tag === "Failed" && last.value.reason ? { reason: last.value.reason } : {}),
            ...(last._tag === "Some" && last.value._tag === "Failed" && last.value.body ? { body: last.value.body } : {})
          })
        ))

  return Videos.of({
    submit,
    status,
    poll,
    generate: (request, options) => Effect.flatMap(submit(request), (taskId) => finish(taskId, options)),
    resumePending: (options) =>
      Effect.map(journal.list, (entries) => entries.map((entry) => ({ entry, updates: poll(entry.taskId, options) })))
  })
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Videos, never, Transport | TaskJournal.TaskJournal> = Layer.effect(Videos, make)

/**
 * Submits a video task and returns its id once it is recorded in the journal.
 *
 * @since 0.1.0
 * @category accessors
 */
export const submit = (request: SubmitRequest): Effect.Effect<TaskId, SwitchboardError, Videos> =>
  Effect.flatMap(Videos, (videos) => videos.submit(request))

/**
 * One status call.
 *
 * @since 0.1.0
 * @category accessors
 */
export const status = (taskId: string): Effect.Effect<TaskPoller.TaskUpdate, SwitchboardError, Videos> =>
  Effect.flatMap(Videos, (videos) => videos.status(taskId))

/**
 * Every update of a task until it ends; the task leaves the journal then.
 *
 * @since 0.1.0
 * @category accessors
 */
export const poll = (
  taskId: string,
  options?: TaskPoller.PollOptions<SwitchboardError>
): Stream.Stream<TaskPoller.TaskUpdate, SwitchboardError, Videos> =>
  Stream.unwrap(Effect.map(Videos, (videos) => videos.poll(taskId, options)))

/**
 * Submit and poll to the end: the succeeded update, or `TaskFailedError` /
 * `TaskTimeoutError`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const generate = (
  request: SubmitRequest,
  options?: TaskPoller.PollOptions<SwitchboardError>
): Effect.Effect<Succeeded, SwitchboardError, Videos> =>
  Effect.flatMap(Videos, (videos) => videos.generate(request, options))

/**
 * A poll stream for every task the journal holds, e.g. after a restart.
 *
 * @since 0.1.0
 * @category accessors
 */
export const resumePending = (
  options?: TaskPoller.PollOptions<SwitchboardError>
): Effect.Effect<ReadonlyArray<Pending>, SwitchboardError, Videos> =>
  Effect.flatMap(Videos, (videos) => videos.resumePending(options))
