/**
 * Video generation as an asynchronous task (spec 3, 4.1 use 4, 4.3): submit
 * through chat with a video model, then poll `POST /v1/chat/task/status`
 * until `succeed` or `failed`. Every submitted task is kept in the
 * `TaskJournal` until the caller is done with it: a failed task leaves it
 * when the failure is seen, a succeeded one (with its `videoUrl`) only when
 * the caller calls `complete`, after saving the video. None is lost across a
 * restart or an interruption.
 *
 * @since 0.1.0
 */
import * as Brand from "effect/Brand"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as GenAi from "./internal/genAi.js"
import * as Json from "./internal/json.js"
import { tapEach } from "./internal/tapEach.js"
import { encoder, plainDecoder } from "./internal/validate.js"
import * as Protocol from "./Protocol.js"
import {
  isTransient,
  JournalError,
  type NotFoundError,
  type RequestError,
  ResponseDecodeError,
  type TaskError,
  TaskFailedError,
  TaskNotFoundError
} from "./SwitchboardError.js"
import * as TaskJournal from "./TaskJournal.js"
import * as TaskPoller from "./TaskPoller.js"
import { truncate } from "./internal/text.js"
import { Transport } from "./Transport.js"

/**
 * The id of a video task: the `id` of the submission's response.
 *
 * @since 0.1.0
 * @category models
 */
export type TaskId = string & Brand.Brand<"TaskId">
/**
 * The id the service gives a submitted video task.
 *
 * @since 0.1.0
 * @category constructors
 */
export const TaskId = Brand.nominal<TaskId>()

/**
 * A video task's request: the model, the prompt, and an image to start from.
 *
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
 * A video task's request: the model, the prompt, and an image to start from.
 *
 * @since 0.1.0
 * @category models
 */
export type SubmitRequest = typeof SubmitRequest.Type

/**
 * The update of a task that finished with its video.
 *
 * @since 0.1.0
 * @category models
 */
export type Succeeded = Extract<TaskPoller.TaskUpdate, { _tag: "Succeeded" }>

/**
 * What `submit` takes besides the request: where the caller means to save
 * the video.
 *
 * @since 0.1.0
 * @category models
 */
export interface SubmitOptions {
  /** Where the caller means to save the video; kept in the journal, so a resumed run saves it there too. */
  readonly output?: string | undefined
}

/**
 * The video calls: submit a task, read its status, poll it to its end,
 * download the result.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly submit: (request: SubmitRequest, options?: SubmitOptions) => Effect.Effect<TaskId, VideosError>
  readonly status: (taskId: string) => Effect.Effect<TaskPoller.TaskUpdate, VideosError>
  readonly poll: (
    taskId: string,
    options?: TaskPoller.PollOptions<VideosError>
  ) => Stream.Stream<TaskPoller.TaskUpdate, VideosError>
  readonly complete: (taskId: string) => Effect.Effect<void, JournalError>
  readonly generate: (
    request: SubmitRequest,
    options?: TaskPoller.PollOptions<VideosError>
  ) => Effect.Effect<Succeeded, VideosError>
  readonly resumePending: (
    options?: TaskPoller.PollOptions<VideosError>
  ) => Effect.Effect<Resumed, VideosError>
}

/**
 * A task found in the journal, with the stream that polls it to its end (a
 * task that already succeeded gives its stored `Succeeded` update at once).
 *
 * @since 0.1.0
 * @category models
 */
export interface Pending {
  readonly entry: TaskJournal.Entry
  readonly updates: Stream.Stream<TaskPoller.TaskUpdate, VideosError>
}

/**
 * What `resumePending` found: the tasks this process now follows, the ones
 * another live process follows, and the records that could not be read
 * (set aside, not in the way of the others).
 *
 * @since 0.1.0
 * @category models
 */
export interface Resumed {
  readonly pending: ReadonlyArray<Pending>
  readonly busy: ReadonlyArray<TaskJournal.Entry>
  readonly quarantined: ReadonlyArray<TaskJournal.Quarantined>
}

/**
 * What the video calls fail with: any request's errors, and a task's own
 * (failed, timed out, unknown to the service, or not journaled).
 *
 * @since 0.2.0
 * @category errors
 */
export type VideosError = RequestError | TaskError

/**
 * The service that makes video calls (see `Service`).
 *
 * @since 0.1.0
 * @category tags
 */
export class Videos extends Context.Service<Videos, Service>()("@switchboard/core/Videos") {}

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

// One host character, then anything but spaces: `[^\s/?#]+[^\s]*` said the same, in time quadratic in a host without a `/`.
const isHttpUrl = (url: string) => /^https?:\/\/[^\s/?#]\S*$/i.test(url)

const updateOf = (
  taskId: string,
  response: Protocol.TaskStatusResponse,
  reply: unknown,
  redact: (text: string) => string
): Effect.Effect<TaskPoller.TaskUpdate, ResponseDecodeError> => {
  switch (response.status) {
    case "succeed":
      return response.video_url && isHttpUrl(response.video_url)
        ? Effect.succeed(TaskPoller.TaskUpdate.Succeeded({ taskId, videoUrl: response.video_url }))
        : Effect.fail(
          new ResponseDecodeError({
            message: response.video_url
              ? `task ${taskId} succeeded with a video_url that is not an http(s) URL`
              : `task ${taskId} succeeded without a video_url`,
            body: truncate(redact(JSON.stringify(reply)), 200)
          })
        )
    case "failed": {
      const reason = reasonOf(response)
      return Effect.succeed(TaskPoller.TaskUpdate.Failed({
        taskId,
        reason: reason === undefined ? undefined : truncate(redact(reason), 1000),
        body: truncate(redact(JSON.stringify(reply)), 1000)
      }))
    }
    default:
      // The status becomes a timed-out poll's `lastStatus`: a word, so bounded, and redacted as the reason is.
      return Effect.succeed(
        TaskPoller.TaskUpdate.InProgress({ taskId, status: truncate(redact(response.status)), progress: response.progress })
      )
  }
}

/**
 * Whether `model` is surely not a video model, by its name: the image model
 * `image2`, and the chat, embedding and moderation families (`gpt-…`,
 * `o1…`, `text-embedding-…`, …). A name that mentions video is never ruled
 * out; an unknown name is not either (the service's model list carries no
 * kind).
 *
 * @since 0.1.0
 * @category models
 */
export const isKnownNonVideoModel = (model: string): boolean =>
  !/video|sora|veo|kling|hailuo|seedance|vidu/i.test(model) &&
  /^(image2$|gpt-|chatgpt-|o\d(-|$)|text-embedding-|omni-moderation|text-moderation|dall-e|whisper|tts-|claude-|gemini-|llama|mistral|qwen|deepseek)/i
    .test(model.trim())

/**
 * The hint a `TaskNotFoundError` carries.
 *
 * @since 0.1.0
 * @category models
 */
export const notFoundHint = (model: string | undefined): string | undefined =>
  model !== undefined && isKnownNonVideoModel(model)
    ? `${model} does not look like a video model: its reply was not a task (is --model a video model?)`
    : undefined

/**
 * The end of a task's update stream as a result: the `Succeeded` update, or
 * `TaskFailedError` with the service's reason.
 *
 * @since 0.1.0
 * @category polling
 */
export const outcome = <E, R>(
  taskId: string,
  updates: Stream.Stream<TaskPoller.TaskUpdate, E, R>
): Effect.Effect<Succeeded, E | TaskFailedError | ResponseDecodeError, R> =>
  Effect.flatMap(Stream.runLast(updates), (last): Effect.Effect<Succeeded, TaskFailedError | ResponseDecodeError> => {
    if (Option.isSome(last) && last.value._tag === "Succeeded") return Effect.succeed(last.value)
    if (Option.isSome(last) && last.value._tag === "Failed") {
      const { body, reason } = last.value
      return Effect.fail(
        new TaskFailedError({
          message: `task ${taskId} failed${reason ? `: ${reason}` : ""}`,
          taskId,
          ...(reason ? { reason } : {}),
          ...(body ? { body } : {})
        })
      )
    }
    return Effect.fail(new ResponseDecodeError({ message: `polling task ${taskId} ended before the task did`, body: "" }))
  })

/**
 * Builds the video service over the `Transport` and the `TaskJournal`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const transport = yield* Transport
  const journal = yield* TaskJournal.TaskJournal
  const layerScope = yield* Effect.scope
  const config = transport.config

  /** Claims this process holds, each in its own scope, closed by `release` or with the layer. */
  const held = new Map<string, Scope.Closeable>()
  const hold = (taskId: string) =>
    Effect.gen(function*() {
      if (held.has(taskId)) return true
      const scope = yield* Scope.fork(layerScope, "sequential")
      const taken = yield* Effect.onError(Scope.provide(journal.claim(taskId), scope), () => Scope.close(scope, Exit.void))
      if (taken) held.set(taskId, scope)
      else yield* Scope.close(scope, Exit.void)
      return taken
    })
  const release = (taskId: string) =>
    Effect.suspend(() => {
      const scope = held.get(taskId)
      held.delete(taskId)
      return scope === undefined ? Effect.void : Scope.close(scope, Exit.void)
    })

  /**
   * Sends the submission and records its task in the room `reservation`
   * holds, then claims it. Uninterruptible: once sent, the task may be paid
   * for, so a caller's timeout waits for its record (the transport's own
   * time limits still apply). A claim that fails leaves the task recorded.
   */
  const sendAndRecord = (
    request: SubmitRequest,
    body: typeof Protocol.ChatRequest.Encoded,
    draft: TaskJournal.Draft,
    reservation: TaskJournal.Reservation
  ) =>
    Effect.uninterruptible(Effect.gen(function*() {
      const completion = yield* transport.call({
        method: "POST",
        path: "/chat/completions",
        body,
        decode: decodeCompletion,
        genAi: GenAi.chat(chatRequestOf(request), "video"),
        // A duplicate task costs money: only retried when it surely was not received.
        retry: "unsent"
      })
      if (completion.id.trim() === "") {
        return yield* new ResponseDecodeError({
          message: "the submission's reply has no task id",
          body: JSON.stringify(completion).slice(0, 200)
        })
      }
      const taskId = TaskId(completion.id)
      const entry: TaskJournal.Entry = { taskId, ...draft, submittedAt: yield* Clock.currentTimeMillis }
      yield* reservation.record(entry).pipe(
        Effect.mapError((e) =>
          new JournalError({
            message: `task ${taskId} was submitted but not recorded: ${e.message}`,
            taskId,
            ...(e.code === undefined ? {} : { code: e.code })
          })
        )
      )
      yield* Effect.catch(hold(taskId), (e) => Effect.logWarning(`task ${taskId} is recorded but could not be claimed: ${e.message}`))
      return taskId
    }))

  const submit = (request: SubmitRequest, options: SubmitOptions = {}) =>
    Effect.scoped(Effect.gen(function*() {
      yield* Effect.fromResult(validateSubmit(request))
      const body = yield* Effect.fromResult(encodeChat(chatRequestOf(request)))
      const draft: TaskJournal.Draft = {
        model: request.model,
        prompt: request.prompt.slice(0, 200),
        ...(options.output === undefined ? {} : { output: options.output })
      }
      // Before paying: room for the record, or a JournalError with nothing sent.
      const reservation = yield* journal.reserve(draft)
      return yield* sendAndRecord(request, body, draft, reservation)
    }))

  /** The service does not know the task: it leaves the journal, and the error says what may be wrong. */
  const notFound = (taskId: string, error: NotFoundError) =>
    Effect.flatMap(Effect.orElseSucceed(journal.get(taskId), () => Option.none()), (entry) => {
      const model = Option.getOrUndefined(entry)?.model
      const hint = notFoundHint(model)
      const forget = Option.isSome(entry) ? Effect.andThen(journal.remove(taskId), release(taskId)) : Effect.void
      return Effect.andThen(forget, Effect.fail(
        new TaskNotFoundError({
          message: `the service does not know task ${taskId}${hint ? `; ${hint}` : ""}`,
          status: 404,
          ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
          taskId,
          ...(model === undefined ? {} : { model }),
          ...(hint === undefined ? {} : { hint })
        })
      ))
    })

  const status = (taskId: string) =>
    transport.call({
      method: "POST",
      path: "/chat/task/status",
      body: { [config.taskIdField]: taskId },
      // The reply as it came is kept too: a failure's `body` shows it, not what was read of it.
      decode: (reply) => Result.map(decodeStatus(reply), (response) => ({ response, reply })),
      genAi: { operation: "task_status", request: { "switchboard.task.id": taskId } }
    }).pipe(
      Effect.catchTag("NotFoundError", (error) => notFound(taskId, error)),
      Effect.flatMap(({ reply, response }) => updateOf(taskId, response, reply, transport.redact))
    )

  /** Keeps the journal in step: a succeeded task keeps its URL, a failed one leaves. */
  const note = (update: TaskPoller.TaskUpdate) => {
    switch (update._tag) {
      case "Succeeded":
        return Effect.flatMap(journal.get(update.taskId), Option.match({
          onNone: () => Effect.void,
          onSome: (entry) => journal.record({ ...entry, videoUrl: update.videoUrl })
        }))
      case "Failed":
        return Effect.andThen(journal.remove(update.taskId), release(update.taskId))
      default:
        return Effect.void
    }
  }

  const poll = (taskId: string, options: TaskPoller.PollOptions<VideosError> = {}) =>
    Stream.suspend(() => {
      let succeeded = false
      return TaskPoller.poll(taskId, status(taskId), {
        isRetryable: isTransient,
        schedule: config.pollSchedule,
        deadline: config.pollDeadline,
        ...options
      }).pipe(
        (updates) =>
          tapEach(updates, (update) => Effect.andThen(note(update), Effect.sync(() => (succeeded ||= update._tag === "Succeeded")))),
        // Until the caller completes a succeeded task, this process keeps it.
        Stream.ensuring(Effect.suspend(() => (succeeded ? Effect.void : release(taskId))))
      )
    })

  const complete = (taskId: string) => Effect.andThen(journal.remove(taskId), release(taskId))

  const resumePending = (options?: TaskPoller.PollOptions<VideosError>) =>
    Effect.gen(function*() {
      const { entries, quarantined } = yield* journal.scan
      const pending: Array<Pending> = []
      const busy: Array<TaskJournal.Entry> = []
      for (const entry of entries) {
        if (!(yield* hold(entry.taskId))) {
          busy.push(entry)
        } else {
          const updates = entry.videoUrl === undefined
            ? poll(entry.taskId, options)
            : Stream.make(TaskPoller.TaskUpdate.Succeeded({ taskId: entry.taskId, videoUrl: entry.videoUrl }))
          pending.push({ entry, updates })
        }
      }
      return { pending, busy, quarantined } satisfies Resumed
    })

  return Videos.of({
    submit,
    status,
    poll,
    complete,
    generate: (request, options) =>
      Effect.flatMap(submit(request), (taskId) =>
        Effect.tap(outcome(taskId, poll(taskId, options)), () => complete(taskId))),
    resumePending
  })
})

/**
 * The video service over the `Transport` and the `TaskJournal`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Videos, never, Transport | TaskJournal.TaskJournal> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(Videos, make))

/**
 * Submits a video task and returns its id once it is recorded in the
 * journal. Room for the record is reserved first: when the journal cannot
 * take it, this fails with `JournalError` (its `code` the system's reason)
 * and nothing is sent. From sending to recording it is uninterruptible: an
 * interruption waits for the record, so a paid task's id is never lost.
 *
 * @since 0.1.0
 * @category accessors
 */
export const submit = (request: SubmitRequest, options?: SubmitOptions): Effect.Effect<TaskId, VideosError, Videos> =>
  Videos.use((videos) => videos.submit(request, options))

/**
 * One status call.
 *
 * @since 0.1.0
 * @category accessors
 */
export const status = (taskId: string): Effect.Effect<TaskPoller.TaskUpdate, VideosError, Videos> =>
  Videos.use((videos) => videos.status(taskId))

/**
 * Every update of a task until it ends. A failed task leaves the journal
 * then; a succeeded one stays, with its URL, until `complete`. A task the
 * service answers 404 for ends with `TaskNotFoundError` and leaves it.
 *
 * @since 0.1.0
 * @category accessors
 */
export const poll = (
  taskId: string,
  options?: TaskPoller.PollOptions<VideosError>
): Stream.Stream<TaskPoller.TaskUpdate, VideosError, Videos> =>
  Stream.unwrap(Videos.useSync((videos) => videos.poll(taskId, options)))

/**
 * Submit and poll to the end: the succeeded update (the task then leaves
 * the journal), or `TaskFailedError` / `TaskTimeoutError`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const generate = (
  request: SubmitRequest,
  options?: TaskPoller.PollOptions<VideosError>
): Effect.Effect<Succeeded, VideosError, Videos> =>
  Videos.use((videos) => videos.generate(request, options))

/**
 * A poll stream for every task the journal holds that no other live process
 * follows, e.g. after a restart; each is claimed by this process first.
 *
 * @since 0.1.0
 * @category accessors
 */
export const resumePending = (
  options?: TaskPoller.PollOptions<VideosError>
): Effect.Effect<Resumed, VideosError, Videos> =>
  Videos.use((videos) => videos.resumePending(options))

/**
 * The caller is done with a task (its video is saved): it leaves the journal.
 *
 * @since 0.1.0
 * @category accessors
 */
export const complete = (taskId: string): Effect.Effect<void, JournalError, Videos> =>
  Videos.use((videos) => videos.complete(taskId))

/**
 * Polls a task to its end: the `Succeeded` update (the task stays in the
 * journal until `complete`), or `TaskFailedError` / `TaskTimeoutError`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const finish = (
  taskId: string,
  options?: TaskPoller.PollOptions<VideosError>
): Effect.Effect<Succeeded, VideosError, Videos> =>
  Videos.use((videos) => outcome(taskId, videos.poll(taskId, options)))
