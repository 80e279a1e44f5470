/**
 * The typed errors of the SDK. Every error carries what a user needs to act
 * (status, the service's message, the request id) and never the API key:
 * errors are built from plain strings and numbers, never from a request.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

const apiFields = {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  requestId: Schema.optional(Schema.String),
  type: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  param: Schema.optional(Schema.String),
  /** The service's `x-should-retry` header, when it sent one: it overrides the status's class. */
  shouldRetry: Schema.optional(Schema.Boolean)
}

/**
 * Marks every Switchboard error (`isSwitchboardError`).
 *
 * @since 0.1.0
 * @category symbols
 */
export const TypeId = "~@switchboard/core/SwitchboardError" as const

/**
 * The type of the mark every Switchboard error carries.
 *
 * @since 0.1.0
 * @category symbols
 */
export type TypeId = typeof TypeId

/**
 * A configuration that cannot work, refused before anything is sent: a layer
 * option (`baseUrl`, `timeout`, `headers.x-…`) or a per-call option
 * (`Switchboard.withRequestOptions`, `Chat.StreamOptions`). `field` names it.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConfigurationError extends Schema.TaggedError<ConfigurationError>()("ConfigurationError", {
  field: Schema.String,
  message: Schema.String
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return false
  }
}

/**
 * A request was rejected before anything was sent: `field` names the offending
 * field as a path such as `messages[2].tool_call_id`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRequestError extends Schema.TaggedError<InvalidRequestError>()("InvalidRequestError", {
  field: Schema.String,
  message: Schema.String
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return false
  }
}

/**
 * 400 or 422 from the service.
 *
 * @since 0.1.0
 * @category errors
 */
export class BadRequestError extends Schema.TaggedError<BadRequestError>()("BadRequestError", apiFields) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return this.shouldRetry ?? false
  }
}

/**
 * 401: the key is missing or wrong.
 *
 * @since 0.1.0
 * @category errors
 */
export class AuthenticationError extends Schema.TaggedError<AuthenticationError>()(
  "AuthenticationError",
  apiFields
) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return this.shouldRetry ?? false
  }
}

/**
 * 403.
 *
 * @since 0.1.0
 * @category errors
 */
export class PermissionDeniedError extends Schema.TaggedError<PermissionDeniedError>()(
  "PermissionDeniedError",
  apiFields
) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return this.shouldRetry ?? false
  }
}

/**
 * 404: unknown model, path or task.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFoundError extends Schema.TaggedError<NotFoundError>()("NotFoundError", apiFields) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return this.shouldRetry ?? false
  }
}

/**
 * 409: a conflict, retried like a transient failure.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConflictError extends Schema.TaggedError<ConflictError>()("ConflictError", apiFields) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return this.shouldRetry ?? true
  }
}

/**
 * 429. `retryAfterMillis` comes from `retry-after-ms` or `Retry-After`, at
 * most a day (`ResponseMetadata.maxReset`): never `Infinity`.
 *
 * @since 0.1.0
 * @category errors
 */
export class RateLimitError extends Schema.TaggedError<RateLimitError>()("RateLimitError", {
  ...apiFields,
  retryAfterMillis: Schema.optional(Schema.Number)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    // An exhausted quota is not a rate: waiting does not refill it.
    return this.shouldRetry ?? !(this.code === "insufficient_quota" || this.type === "insufficient_quota")
  }
  /** How long the service asked to wait before another try. */
  get retryAfter(): Duration.Duration | undefined {
    return this.retryAfterMillis === undefined ? undefined : Duration.millis(this.retryAfterMillis)
  }
}

/**
 * A status that says the request, as sent, will not succeed and that has no
 * closer name: any 4xx but 400, 401, 403, 404, 408, 409, 422 and 429 (413:
 * the request was too large), or a status outside 2xx that is no error at all
 * (a 3xx redirect: the base URL is probably wrong). Never retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class ClientError extends Schema.TaggedError<ClientError>()("ClientError", apiFields) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return this.shouldRetry ?? false
  }
}

/**
 * 5xx.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends Schema.TaggedError<ServerError>()("ServerError", {
  ...apiFields,
  retryAfterMillis: Schema.optional(Schema.Number)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return this.shouldRetry ?? true
  }
  /** How long the service asked to wait before another try. */
  get retryAfter(): Duration.Duration | undefined {
    return this.retryAfterMillis === undefined ? undefined : Duration.millis(this.retryAfterMillis)
  }
}

/**
 * The connection failed. `sent` is false only when the request surely did not
 * reach the service (the connection was refused), which decides whether a
 * non-idempotent call may be retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError extends Schema.TaggedError<TransportError>()("TransportError", {
  message: Schema.String,
  sent: Schema.Boolean
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return true
  }
}

/**
 * A time limit was reached: the whole request, the first event of a stream,
 * the gap between two reads of a stream, a whole stream (`total`), a 408
 * from the service, or (`paced`) a call that pacing would have held past its
 * own limit, failed before it was sent (`Pacing`; never retried).
 *
 * @since 0.1.0
 * @category errors
 */
export class TimeoutError extends Schema.TaggedError<TimeoutError>()("TimeoutError", {
  message: Schema.String,
  phase: Schema.Literals(["request", "first-byte", "idle", "total", "service", "paced"]),
  requestId: Schema.optional(Schema.String)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return true
  }
}

/**
 * A response body that is not what the protocol says. `body` is the start of
 * the offending text. A success status whose body is the service's error
 * (`{"error": {"message": …}}` with a 200) is one too: `message` is then the
 * service's own message, and `type`, `code`, `param` its other fields.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseDecodeError extends Schema.TaggedError<ResponseDecodeError>()("ResponseDecodeError", {
  message: Schema.String,
  body: Schema.String,
  status: Schema.optional(Schema.Number),
  requestId: Schema.optional(Schema.String),
  type: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  param: Schema.optional(Schema.String)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return false
  }
}

/**
 * A stream that failed after it started. `reason` tells a caller whether a
 * retry may help:
 * - `cut`: the stream ended before the completion did (the connection was
 *   lost, or the body ended without `finish_reason` or `[DONE]`);
 * - `error-event`: the service sent an error (an `error` event, an
 *   `{"error"}` chunk, or a JSON error body instead of a stream); `message`
 *   is the service's.
 *
 * @since 0.1.0
 * @category errors
 */
export class StreamError extends Schema.TaggedError<StreamError>()("StreamError", {
  message: Schema.String,
  reason: Schema.Literals(["cut", "error-event"]),
  requestId: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return this.reason === "cut"
  }
}

/**
 * A reply past a size limit: a JSON body over `maxResponseBytes`, a stream
 * event over its limit, or more than `accumulate` gathers. The connection
 * is closed; never retried. `limit` is in bytes (characters for events and
 * `accumulate`).
 *
 * @since 0.1.0
 * @category errors
 */
export class ResponseTooLargeError extends Schema.TaggedError<ResponseTooLargeError>()("ResponseTooLargeError", {
  message: Schema.String,
  limit: Schema.Number,
  status: Schema.optional(Schema.Number),
  requestId: Schema.optional(Schema.String)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return false
  }
}

/**
 * A video task ended `failed`. `reason` is read from the usual fields
 * (`reason`, `fail_reason`, `error`, `error.message`, `message`); `body` is
 * the status reply as JSON text.
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskFailedError extends Schema.TaggedError<TaskFailedError>()("TaskFailedError", {
  message: Schema.String,
  taskId: Schema.String,
  reason: Schema.optional(Schema.String),
  body: Schema.optional(Schema.String)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return false
  }
}

/**
 * A poll reached its deadline before the task ended. The task may still
 * finish: it stays in the journal and can be polled again.
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskTimeoutError extends Schema.TaggedError<TaskTimeoutError>()("TaskTimeoutError", {
  message: Schema.String,
  taskId: Schema.String,
  lastStatus: Schema.optional(Schema.String)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return false
  }
}

/**
 * The service answered a task's status with 404: it does not know the task
 * (an id from a submission to a model that is not a video model, or a task
 * it has forgotten). The task leaves the journal; `hint` says what may be
 * wrong.
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskNotFoundError extends Schema.TaggedError<TaskNotFoundError>()("TaskNotFoundError", {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  requestId: Schema.optional(Schema.String),
  taskId: Schema.String,
  model: Schema.optional(Schema.String),
  hint: Schema.optional(Schema.String)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return false
  }
}

/**
 * An `image2` reply without any image in it.
 *
 * @since 0.1.0
 * @category errors
 */
export class NoImageInResponseError extends Schema.TaggedError<NoImageInResponseError>()(
  "NoImageInResponseError",
  { message: Schema.String, content: Schema.String }
) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return false
  }
}

/**
 * The task journal could not be read or written. The task itself may exist:
 * its id is in the message when known. `code` is the system's name for the
 * cause when it gave one (`ENOSPC`, `EDQUOT`, `EACCES`, `QuotaExceededError`,
 * `SQLITE_FULL`).
 *
 * @since 0.1.0
 * @category errors
 */
export class JournalError extends Schema.TaggedError<JournalError>()("JournalError", {
  message: Schema.String,
  taskId: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String)
}) {
  /**
   * Marks a Switchboard error, for `isSwitchboardError`.
   *
   * @since 0.1.0
   */
  readonly [TypeId] = TypeId
  /** Whether repeating the same request may succeed (see `isTransient`). */
  get isRetryable(): boolean {
    return false
  }
}

/**
 * Every error class, in one list: the `SwitchboardError` union, `errorTags`
 * and `isSwitchboardError` derive from it (and any schema of them all, as
 * `Schema.Union(...errorClasses)`).
 *
 * @since 0.1.0
 * @category errors
 */
export const errorClasses = [
  ConfigurationError,
  InvalidRequestError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  ClientError,
  ServerError,
  TransportError,
  TimeoutError,
  ResponseDecodeError,
  ResponseTooLargeError,
  StreamError,
  TaskFailedError,
  TaskTimeoutError,
  TaskNotFoundError,
  NoImageInResponseError,
  JournalError
] as const

/**
 * Every error the SDK's calls can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type SwitchboardError = InstanceType<(typeof errorClasses)[number]>

/**
 * Errors that answer an HTTP status from the service.
 *
 * @since 0.1.0
 * @category errors
 */
export type ApiError =
  | BadRequestError
  | AuthenticationError
  | PermissionDeniedError
  | NotFoundError
  | ConflictError
  | RateLimitError
  | ClientError
  | ServerError
  | TimeoutError

/**
 * What any call to the service can fail with, whatever the capability: a
 * request refused before sending (`InvalidRequestError`, a per-call
 * `ConfigurationError`), a status, the connection, a time limit, or a reply
 * that does not decode or is too large. Each capability's error type is
 * this and its own errors.
 *
 * @since 0.2.0
 * @category errors
 */
export type RequestError =
  | ConfigurationError
  | InvalidRequestError
  | ApiError
  | TransportError
  | ResponseDecodeError
  | ResponseTooLargeError

/**
 * What a streamed call can fail with: a `RequestError` until the stream
 * starts, a `StreamError` after.
 *
 * @since 0.2.0
 * @category errors
 */
export type StreamRequestError = RequestError | StreamError

/**
 * What a video task's polling and journal add to `RequestError`.
 *
 * @since 0.2.0
 * @category errors
 */
export type TaskError = TaskFailedError | TaskTimeoutError | TaskNotFoundError | JournalError

/**
 * The `_tag` of every `SwitchboardError`.
 *
 * @since 0.1.0
 * @category guards
 */
export const errorTags: ReadonlyArray<SwitchboardError["_tag"]> = /* @__PURE__ */ errorClasses.map((errorClass) => errorClass.identifier as SwitchboardError["_tag"])

/**
 * Whether a value is one of Switchboard's errors (any `SwitchboardError`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isSwitchboardError = (u: unknown): u is SwitchboardError => Predicate.hasProperty(u, TypeId)

/**
 * Whether repeating the same request may succeed: 408, 409, 429, 5xx, a
 * timeout, a failed connection and a cut stream (decision 6), unless the
 * service said otherwise with `x-should-retry`. The meaning is each error
 * class's own (`isRetryable`, as `effect/ai`'s reasons carry it): the
 * retry policy, `@switchboard/ai`'s `AiError` mapping and the CLI read it
 * there. Which calls may then be repeated is `Retry.standard`'s to decide.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTransient = (error: SwitchboardError): boolean => error.isRetryable

/**
 * The details of an error body (decision 2), as the error constructors take them.
 *
 * @since 0.1.0
 * @category constructors
 */
export interface ApiErrorDetails {
  readonly message: string
  readonly status: number
  readonly requestId?: string | undefined
  readonly type?: string | undefined
  readonly code?: string | undefined
  readonly param?: string | undefined
  readonly retryAfterMillis?: number | undefined
  readonly shouldRetry?: boolean | undefined
}

/**
 * Maps a status outside 2xx to its typed error (decision 2): 400 and 422,
 * 401, 403, 404, 408, 409 and 429 have their own; any other status from 500
 * up is a `ServerError`, any other below 500 a `ClientError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStatus = (details: ApiErrorDetails): ApiError => {
  const { retryAfterMillis, ...fields } = dropUndefined(details)
  switch (details.status) {
    case 400:
    case 422:
      return new BadRequestError(fields)
    case 401:
      return new AuthenticationError(fields)
    case 403:
      return new PermissionDeniedError(fields)
    case 404:
      return new NotFoundError(fields)
    case 408:
      // No `shouldRetry` here: a 408 is retried as any timeout is.
      return new TimeoutError({
        message: fields.message,
        phase: "service",
        ...(fields.requestId === undefined ? {} : { requestId: fields.requestId })
      })
    case 409:
      return new ConflictError(fields)
    case 429:
      return new RateLimitError(dropUndefined({ ...fields, retryAfterMillis }))
    case 413:
      return new ClientError({ ...fields, message: `request too large: ${fields.message}` })
    default:
      return details.status >= 500
        ? new ServerError(dropUndefined({ ...fields, retryAfterMillis }))
        : new ClientError(fields)
  }
}

const dropUndefined = <A extends object>(a: A): { [K in keyof A]: Exclude<A[K], undefined> } => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(a)) if (value !== undefined) out[key] = value
  return out as { [K in keyof A]: Exclude<A[K], undefined> }
}
