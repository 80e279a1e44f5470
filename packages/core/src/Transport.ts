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
import * as Scope from "effect/Scope"
import * as HttpWire from "./HttpWire.js"
import { errorCode } from "./internal/errorCode.js"
import * as GenAi from "./internal/genAi.js"
import * as Issue from "./internal/issue.js"
import * as Json from "./internal/json.js"
import * as Observe from "./internal/observe.js"
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
  /** What the call is, for its span and metrics (GenAI conventions, `docs/observability.md`). */
  readonly genAi: GenAi.Call<A>
  readonly retry?: RetryPolicy | undefined
}

/**
 * What `open` and `openWith` take: a call without a decoder.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions extends Omit<CallOptions<unknown>, "decode" | "genAi"> {
  /** A stream's reply is read by its caller: no `reply` or `output` here. */
  readonly genAi: GenAi.Start
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
  /**
   * Server-provided text with the configured key and secret header values
   * replaced by `[redacted]`: applied to everything the SDK surfaces from a
   * reply (error messages and bodies, stream errors, task failure reasons).
   */
  readonly redact: (text: string) => string
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

// Header names whose values are secrets, besides the key's `authorization`.
const secretHeader = /auth|key|token|secret|cookie|password|session/i

/**
 * Replaces every configured secret (the key, secret header values) in a
 * server-provided text. Gateways echo a wrong key in their 401 message.
 */
const redactor = (config: SwitchboardConfig["Type"]): (text: string) => string => {
  const secrets = [
    ...Option.toArray(Option.map(config.apiKey, Redacted.value)),
    ...Object.entries(config.headers).filter(([name]) => secretHeader.test(name)).map(([, value]) => value)
  ].filter((secret) => secret.length >= 4)
  if (secrets.length === 0) return (text) => text
  return (text) => {
    let out = text
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join("[redacted]")
    return out
  }
}

/** What a status without a body says: a redirect names where it points. */
const statusText = (head: HttpWire.Head): string => {
  const location = head.headers["location"]
  return head.status >= 300 && head.status < 400 && location
    ? `HTTP ${head.status}, redirected to ${truncate(location)}: is the base URL right?`
    : `HTTP ${head.status}`
}

/**
 * A status outside 2xx → its typed error with the service's message
 * (decision 2), found in any of the usual error shapes, redacted.
 */
const failure = (head: HttpWire.Head, body: Effect.Effect<string>, redact: (text: string) => string) =>
  Effect.flatMap(body, (text) =>
    Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
      const error = Json.serviceErrorOf(text)
      const optional = (value: string | undefined) => (value === undefined ? undefined : redact(truncate(value)))
      return Effect.fail(
        SwitchboardError.fromStatus({
          status: head.status,
          message: redact(error === undefined ? truncate(text.trim()) || statusText(head) : truncate(error.message, 1000)),
          requestId: optional(head.headers["x-request-id"]),
          type: optional(error?.type),
          code: optional(error?.code),
          param: optional(error?.param),
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
const wireFailure = (
  error: HttpWire.WireError,
  where: string,
  timeoutMillis: number,
  maxBytes: number
): SwitchboardError.SwitchboardError => {
  if (error.reason === "timeout") {
    return new SwitchboardError.TimeoutError({ message: `${where} took longer than ${timeoutMillis} ms`, phase: "request" })
  }
  if (error.reason === "response") {
    return new SwitchboardError.TransportError({ message: `connection lost while reading ${where}`, sent: true })
  }
  if (error.reason === "too-large") {
    return new SwitchboardError.ResponseTooLargeError({
      message: `the reply to ${where} is larger than ${maxBytes} bytes (maxResponseBytes)`,
      limit: maxBytes
    })
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
  const maxBytes: HttpWire.Limits = { maxBytes: config.maxResponseBytes }
  const liveLimits: HttpWire.Limits = { timeoutMillis, maxBytes: config.maxResponseBytes }
  const redact = redactor(config)
  const schedules = { transient: retrySchedule(config, "transient"), unsent: retrySchedule(config, "unsent") }

  const request = (options: Pick<CallOptions<unknown>, "method" | "path" | "body">): HttpWire.Request =>
    options.body === undefined ?
      { method: options.method, url: config.apiUrl + options.path, headers } :
      { method: options.method, url: config.apiUrl + options.path, headers: jsonHeaders, body: JSON.stringify(options.body) }

  const server = GenAi.serverOf(config.apiUrl)

  /** The attempts, retried by policy, in one span named and annotated by the GenAI conventions. */
  const withPolicy = <A, R>(
    options: Pick<CallOptions<A>, "method" | "path" | "genAi" | "retry">,
    attempt: Effect.Effect<A, SwitchboardError.SwitchboardError, R>
  ) =>
    Effect.flatMap(
      Observe.start(options.genAi, server, redact, { "http.request.method": options.method, "url.path": `/v1${options.path}` }),
      (observation) => Observe.observeCall(observation, retrying(attempt, schedules[options.retry ?? "transient"]))
    )

  /** The status on the span; a status outside 2xx → its typed error, never a success. */
  const checkStatus = (head: HttpWire.Head, body: Effect.Effect<string>) =>
    Effect.zipRight(
      Effect.annotateCurrentSpan("http.response.status_code", head.status),
      head.status >= 200 && head.status < 300 ? Effect.void : failure(head, body, redact)
    )

  const call = <A>(options: CallOptions<A>): Effect.Effect<A, SwitchboardError.SwitchboardError> => {
    const where = `${options.method} /v1${options.path}`
    const req = request(options)
    const exchange = Effect.clockWith((clock) =>
      clock === defaultClock ? wire.text(req, liveLimits) : Effect.timeoutFail(wire.text(req, maxBytes), {
        duration: config.timeout,
        onTimeout: () => new HttpWire.WireError({ reason: "timeout" })
      })
    )
    const attempt = Effect.flatMap(
      Effect.mapError(exchange, (error) => wireFailure(error, where, timeoutMillis, config.maxResponseBytes)),
      (response) =>
        Effect.flatMap(checkStatus(response, Effect.succeed(response.text)), () => readJson(response, options.decode, where, redact))
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
      Effect.mapError(opened, (error) => wireFailure(error, where, timeoutMillis, config.maxResponseBytes)),
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

  return Transport.of({ call, open, openWith, config, redact })
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

/** The start of an opened response's error body (up to `maxErrorBytes`), or what arrived of it. */
const bodyText = (response: HttpWire.OpenResponse): Effect.Effect<string> =>
  Effect.orElseSucceed(HttpWire.readText(response.body, HttpWire.maxErrorBytes), () => "")

const readJson = <A>(
  response: HttpWire.TextResponse,
  decode: (u: unknown) => Either.Either<A, ParseResult.ParseError>,
  where: string,
  redact: (text: string) => string
): Effect.Effect<A, SwitchboardError.SwitchboardError> => {
  const text = response.text
  // The reason first, then where and the start of the body.
  const decodeError = (reason: string) => {
    const requestId = response.headers["x-request-id"]
    return new SwitchboardError.ResponseDecodeError({
      message: redact(`${reason} (reply to ${where}: ${truncate(text, 80)})`),
      body: redact(truncate(text)),
      status: response.status,
      ...(requestId === undefined ? {} : { requestId: redact(truncate(requestId)) })
    })
  }
  let json: unknown
  try {
    json = Json.parse(text)
  } catch {
    return Effect.fail(decodeError("reply: is not JSON"))
  }
  const decoded = decode(json)
  if (Either.isRight(decoded)) return Effect.succeed(decoded.right)
  // A success status with an error body: the service's message says more than the shape.
  const error = Json.serviceError(json)
  return Effect.fail(
    decodeError(
      error !== undefined && typeof json === "object" && json !== null && "error" in json
        ? `reply: the service answered ${response.status} with an error: ${truncate(error.message)}`
        : Issue.describe(decoded.left)
    )
  )
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Transport, never, SwitchboardConfig | HttpWire.HttpWire> = Layer.effect(
  Transport,
  make
)
