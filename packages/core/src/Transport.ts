/**
 * The one place that talks HTTP: base URL + `/v1`, the bearer header, JSON
 * bodies, status → typed error, retries (decision 6), timeouts (decision 7)
 * and a span per call. Every capability goes through it.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as HttpWire from "./HttpWire.js"
import { errorCode } from "./internal/errorCode.js"
import * as Issue from "./internal/issue.js"
import * as Protocol from "./Protocol.js"
import { SwitchboardConfig } from "./SwitchboardConfig.js"
import * as SwitchboardError from "./SwitchboardError.js"

/**
 * Which failures a call may be retried after.
 * - `transient`: 408, 409, 429, 5xx, timeouts and connection failures
 *   (idempotent-safe calls).
 * - `unsent`: only failures where the request surely did not reach the
 *   service (a refused connection, 429). Used for video submission, where a
 *   duplicate costs money.
 *
 * @since 0.1.0
 * @category models
 */
export type RetryPolicy = "transient" | "unsent"

/**
 * @since 0.1.0
 * @category models
 */
export interface CallOptions<A> {
  readonly method: "GET" | "POST"
  /** Path below `/v1`, e.g. `/chat/completions`. */
  readonly path: string
  /** The already encoded JSON body. */
  readonly body?: unknown
  readonly decode: (u: unknown) => Either.Either<A, ParseResult.ParseError>
  /** Span name, e.g. `Switchboard.Chat.create`. */
  readonly span: string
  /** Recorded on the span. */
  readonly model?: string | undefined
  readonly retry?: RetryPolicy | undefined
}

/**
 * What `open` and `openWith` take: a call without a decoder.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions extends Omit<CallOptions<unknown>, "decode"> {
  /**
   * Time limit of each attempt, from sending the request to the end of the
   * caller's `commit` (for a stream: its first bytes). Running out fails the
   * attempt with a `TimeoutError` of phase `first-byte`, retried like any
   * transient failure. Default: no limit.
   */
  readonly firstByteTimeout?: Duration.DurationInput | undefined
  /**
   * The longest silence between two reads of the body after the first; the
   * body then fails with a `WireError` of reason `timeout`. Default: no limit.
   */
  readonly idleTimeout?: Duration.DurationInput | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** One JSON call: send, check status, decode, retrying per policy. */
  readonly call: <A>(options: CallOptions<A>) => Effect.Effect<A, SwitchboardError.SwitchboardError>
  /**
   * Sends a request and yields the response once its status is a success, with
   * the same retries as `call`. The body is left unread, for streaming; the
   * exchange lasts as long as the scope.
   */
  readonly open: (
    options: OpenOptions
  ) => Effect.Effect<HttpWire.OpenResponse, SwitchboardError.SwitchboardError, Scope.Scope>
  /**
   * Like `open`, but an attempt lasts until `commit` succeeds on the response
   * (e.g. the first bytes of a stream arrived): a failure before then retries
   * the request, nothing after it does. A failed attempt's exchange is
   * aborted at once.
   */
  readonly openWith: <A, R>(
    options: OpenOptions,
    commit: (response: HttpWire.OpenResponse) => Effect.Effect<A, SwitchboardError.SwitchboardError, R>
  ) => Effect.Effect<A, SwitchboardError.SwitchboardError, R | Scope.Scope>
  /** The resolved configuration, for capabilities that need its settings. */
  readonly config: SwitchboardConfig["Type"]
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Transport extends Context.Tag("@switchboard/core/Transport")<Transport, Service>() {}

const bodyPreviewLength = 200

/** Keeps error texts short: the start of a body is enough to recognise it. */
export const truncate = (text: string, max = bodyPreviewLength): string =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`


/** `retry-after-ms`, then `Retry-After` in seconds or as an HTTP date. */
const retryAfterMillis = (headers: Readonly<Record<string, string>>, now: number): number | undefined => {
  const ms = Number(headers["retry-after-ms"])
  if (headers["retry-after-ms"] && Number.isFinite(ms) && ms >= 0) return ms
  const value = headers["retry-after"]
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const decodeErrorBody = Schema.decodeUnknownOption(Schema.parseJson(Protocol.ErrorBody))

const stringOf = (value: string | number | null | undefined) =>
  value === null || value === undefined ? undefined : String(value)

/** What a status without a body says: a redirect names where it points. */
const statusText = (head: HttpWire.Head): string => {
  const location = head.headers["location"]
  return head.status >= 300 && head.status < 400 && location
    ? `HTTP ${head.status}, redirected to ${truncate(location)}: is the base URL right?`
    : `HTTP ${head.status}`
}

/** A status outside 2xx → its typed error with the service's message (decision 2). */
const failure = (head: HttpWire.Head, body: Effect.Effect<string>) =>
  Effect.flatMap(body, (text) =>
    Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
      const error = Option.getOrUndefined(decodeErrorBody(text))?.error
      return Effect.fail(
        SwitchboardError.fromStatus({
          status: head.status,
          message: error?.message ?? (truncate(text.trim()) || statusText(head)),
          requestId: head.headers["x-request-id"],
          type: stringOf(error?.type),
          code: stringOf(error?.code),
          param: stringOf(error?.param),
          retryAfterMillis: retryAfterMillis(head.headers, now)
        })
      )
    }))

const shouldRetry = (policy: RetryPolicy) => (error: SwitchboardError.SwitchboardError): boolean =>
  policy === "transient"
    ? SwitchboardError.isTransient(error)
    : error._tag === "RateLimitError" || (error._tag === "TransportError" && !error.sent)

const retryAfterOf = (error: SwitchboardError.SwitchboardError): number | undefined =>
  error._tag === "RateLimitError" || error._tag === "ServerError" ? error.retryAfterMillis : undefined

/**
 * Jittered exponential backoff for at most `maxRetries` retries, waiting what
 * the service asked for in `Retry-After` when it did, capped by `maxRetryDelay`.
 *
 * @since 0.1.0
 * @category retries
 */
export const retrySchedule = (config: SwitchboardConfig["Type"], policy: RetryPolicy) =>
  Schedule.exponential(config.retryBaseDelay).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(config.maxRetries)),
    Schedule.intersect(Schedule.identity<SwitchboardError.SwitchboardError>()),
    Schedule.whileInput(shouldRetry(policy)),
    Schedule.modifyDelay(([, error], delay) => {
      const asked = retryAfterOf(error)
      return Duration.min(asked === undefined ? delay : Duration.millis(asked), config.maxRetryDelay)
    })
  )

/** The clock of the default runtime: under it, a time limit can be a plain timer. */
const defaultClock = Effect.runSync(Effect.clock)

/**
 * `Effect.retry(attempt, schedule)`, with the schedule's driver made only
 * once an attempt has failed: most calls succeed at once, and making the
 * driver is most of what `Effect.retry` costs them.
 */
const retrying = <A, R>(
  attempt: Effect.Effect<A, SwitchboardError.SwitchboardError, R>,
  schedule: Schedule.Schedule<unknown, SwitchboardError.SwitchboardError>
): Effect.Effect<A, SwitchboardError.SwitchboardError, R> =>
  Effect.catchAll(attempt, (first) =>
    Effect.flatMap(Schedule.driver(schedule), (driver) => {
      const next = (error: SwitchboardError.SwitchboardError): Effect.Effect<A, SwitchboardError.SwitchboardError, R> =>
        Effect.matchEffect(driver.next(error), {
          onFailure: () => Effect.fail(error),
          onSuccess: () => Effect.catchAll(attempt, next)
        })
      return next(first)
    }))

/** A wire failure before or while reading a response → its typed error. */
const wireFailure = (error: HttpWire.WireError, where: string, timeoutMillis: number): SwitchboardError.SwitchboardError => {
  if (error.reason === "timeout") {
    return new SwitchboardError.TimeoutError({ message: `${where} took longer than ${timeoutMillis} ms`, phase: "request" })
  }
  if (error.reason === "response") {
    return new SwitchboardError.TransportError({ message: `connection lost while reading ${where}`, sent: true })
  }
  const code = errorCode(error.cause)
  return new SwitchboardError.TransportError({
    message: `connection failed on ${where}${code ? ` (${code})` : ""}`,
    sent: code !== "ECONNREFUSED" && code !== "ENOTFOUND" && code !== "EAI_AGAIN"
  })
}

/**
 * Builds the transport from the configuration and an `HttpWire`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const config = yield* SwitchboardConfig
  const wire = yield* HttpWire.HttpWire
  const headers: Record<string, string> = { accept: "application/json", ...config.headers }
  if (Option.isSome(config.apiKey)) headers["authorization"] = `Bearer ${Redacted.value(config.apiKey.value)}`
  const jsonHeaders: Record<string, string> = { ...headers, "content-type": "application/json" }
  const timeoutMillis = Duration.toMillis(config.timeout)
  const liveLimits: HttpWire.Limits = { timeoutMillis }
  const schedules = { transient: retrySchedule(config, "transient"), unsent: retrySchedule(config, "unsent") }

  const request = (options: Omit<CallOptions<unknown>, "decode">): HttpWire.Request =>
    options.body === undefined ?
      { method: options.method, url: config.apiUrl + options.path, headers } :
      { method: options.method, url: config.apiUrl + options.path, headers: jsonHeaders, body: JSON.stringify(options.body) }

  const withPolicy = <A, R>(
    options: Omit<CallOptions<unknown>, "decode">,
    attempt: Effect.Effect<A, SwitchboardError.SwitchboardError, R>
  ) =>
    Effect.withSpan(retrying(attempt, schedules[options.retry ?? "transient"]), options.span, {
      kind: "client",
      // A stack trace per call costs more than the rest of the span.
      captureStackTrace: false,
      attributes: {
        "http.request.method": options.method,
        "url.path": `/v1${options.path}`,
        ...(options.model ? { "gen_ai.request.model": options.model } : {})
      }
    })

  /** The status on the span; a status outside 2xx → its typed error, never a success. */
  const checkStatus = (head: HttpWire.Head, body: Effect.Effect<string>) =>
    Effect.zipRight(
      Effect.annotateCurrentSpan("http.response.status_code", head.status),
      head.status >= 200 && head.status < 300 ? Effect.void : failure(head, body)
    )

  const call = <A>(options: CallOptions<A>): Effect.Effect<A, SwitchboardError.SwitchboardError> => {
    const where = `${options.method} /v1${options.path}`
    const req = request(options)
    const exchange = Effect.clockWith((clock) =>
      clock === defaultClock ? wire.text(req, liveLimits) : Effect.timeoutFail(wire.text(req), {
        duration: config.timeout,
        onTimeout: () => new HttpWire.WireError({ reason: "timeout" })
      })
    )
    const attempt = Effect.flatMap(
      Effect.mapError(exchange, (error) => wireFailure(error, where, timeoutMillis)),
      (response) =>
        Effect.flatMap(checkStatus(response, Effect.succeed(response.text)), () => readJson(response, options.decode, where))
    )
    return withPolicy(options, attempt)
  }

  const openWith = <A, R>(
    options: OpenOptions,
    commit: (response: HttpWire.OpenResponse) => Effect.Effect<A, SwitchboardError.SwitchboardError, R>
  ): Effect.Effect<A, SwitchboardError.SwitchboardError, R | Scope.Scope> => {
    const where = `${options.method} /v1${options.path}`
    const req = request(options)
    const idleMillis = options.idleTimeout === undefined ? undefined : Duration.toMillis(options.idleTimeout)
    const opened = Effect.clockWith((clock) =>
      clock === defaultClock || idleMillis === undefined ? wire.open(req, { idleMillis }) : Effect.map(
        wire.open(req),
        (response): HttpWire.OpenResponse => ({ ...response, body: HttpWire.timeoutBetweenReads(response.body, idleMillis) })
      )
    )
    const attempt = inOwnScope(Effect.flatMap(
      Effect.mapError(opened, (error) => wireFailure(error, where, timeoutMillis)),
      (response) => Effect.flatMap(checkStatus(response, bodyText(response)), () => commit(response))
    ))
    if (options.firstByteTimeout === undefined) return withPolicy(options, attempt)
    const limit = Duration.decode(options.firstByteTimeout)
    return withPolicy(
      options,
      Effect.timeoutFail(attempt, {
        duration: limit,
        onTimeout: () =>
          new SwitchboardError.TimeoutError({
            message: `${where} sent no data within ${Duration.toMillis(limit)} ms`,
            phase: "first-byte"
          })
      })
    )
  }

  const open = (options: OpenOptions) => openWith(options, Effect.succeed)

  return Transport.of({ call, open, openWith, config })
})

/**
 * Runs an attempt in a scope of its own, closed (aborting its exchange) when
 * the attempt fails; a successful one lives as long as the enclosing scope.
 */
const inOwnScope = <A, E, R>(attempt: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Scope.Scope> | Scope.Scope> =>
  Effect.flatMap(Scope.Scope, (parent) =>
    Effect.flatMap(Scope.fork(parent, ExecutionStrategy.sequential), (scope) =>
      Effect.onExit(
        Scope.extend(attempt, scope),
        (exit) => Exit.isFailure(exit) ? Scope.close(scope, exit) : Effect.void
      )))

/** The whole body of an opened response, or what arrived of it. */
const bodyText = (response: HttpWire.OpenResponse): Effect.Effect<string> =>
  Effect.orElseSucceed(Stream.mkString(Stream.decodeText(response.body)), () => "")

const readJson = <A>(
  response: HttpWire.TextResponse,
  decode: (u: unknown) => Either.Either<A, ParseResult.ParseError>,
  where: string
): Effect.Effect<A, SwitchboardError.SwitchboardError> => {
  const text = response.text
  // The reason first, then where and the start of the body.
  const decodeError = (reason: string) => {
    const requestId = response.headers["x-request-id"]
    return new SwitchboardError.ResponseDecodeError({
      message: `${reason} (reply to ${where}: ${truncate(text, 80)})`,
      body: truncate(text),
      status: response.status,
      ...(requestId === undefined ? {} : { requestId })
    })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Effect.fail(decodeError("reply: is not JSON"))
  }
  const decoded = decode(json)
  return Either.isRight(decoded) ? Effect.succeed(decoded.right) : Effect.fail(decodeError(Issue.describe(decoded.left)))
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Transport, never, SwitchboardConfig | HttpWire.HttpWire> = Layer.effect(
  Transport,
  make
)
