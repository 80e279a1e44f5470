/**
 * The one place that talks HTTP: base URL + `/v1`, the bearer header, request
 * bodies, status → typed error, wire failures → typed errors, retries
 * (`Retry`), time limits, per-call options (`RequestOptions`) and the span of
 * each service call. Every capability goes through `call` (one JSON reply) or
 * `stream` (a body read as it arrives).
 *
 * @since 0.1.0
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { constVoid } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Pull from "effect/Pull"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Fiber from "effect/Fiber"
import type * as Tracer from "effect/Tracer"
import * as HttpWire from "./HttpWire.js"
import { errorCode } from "./internal/errorCode.js"
import * as GenAi from "./internal/genAi.js"
import * as Issue from "./internal/issue.js"
import * as Json from "./internal/json.js"
import * as Observe from "./internal/observe.js"
import { isSecretHeader, redactor, RefuseSecretHeaders, secretHeaderIn } from "./internal/secrets.js"
import { truncate } from "./internal/text.js"
import * as Pacing from "./Pacing.js"
import * as RequestOptions from "./RequestOptions.js"
import * as ResponseMetadata from "./ResponseMetadata.js"
import * as Retry from "./Retry.js"
import * as SwitchboardConfig from "./SwitchboardConfig.js"
import * as SwitchboardError from "./SwitchboardError.js"

/**
 * What every request names: where it goes, what it carries, how it may be
 * retried, and the span it runs in.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestSpec {
  readonly method: HttpWire.Method
  /** Path below `/v1`, e.g. `/chat/completions`. */
  readonly path: string
  /** An already encoded value, sent as JSON. */
  readonly body?: unknown
  /** What a repeat may cost (`Retry.CallClass`). Default `safe`. */
  readonly retry?: Retry.CallClass | undefined
  /**
   * What the call is, for its span (kind `client`) and metrics by the GenAI
   * conventions: its name, the attributes set when it starts, where samplers
   * see them (`docs/observability.md`).
   */
  readonly genAi: GenAi.Start
}

/**
 * One JSON call for `Transport.call`: the request, how to decode the reply,
 * and what to record of it.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions<A> extends RequestSpec {
  readonly decode: (u: unknown) => Result.Result<A, SchemaIssue.Issue>
  /** Also reads the reply (response id, usage …) for the span and the metrics, before the span ends. */
  readonly genAi: GenAi.Call<A>
}

/**
 * What a stream's decoder gets besides the body.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamReply {
  readonly headers: Readonly<Record<string, string>>
  readonly requestId: string | undefined
  /** The call's span, open until the stream ends: set attributes on it as elements arrive. */
  readonly span: Tracer.Span
  /** `Service.redact`, with the call's own secret headers. */
  readonly redact: (text: string) => string
  /**
   * Says the decoder has all it needs of the body (e.g. `[DONE]` was read):
   * the wire may then keep the connection for the next request
   * (`HttpWire.OpenResponse.done`).
   *
   * @since 1.1.0
   */
  readonly done: () => void
}

/**
 * One streamed call for `Transport.stream`: the request, how its body
 * becomes elements, and what to record of them.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamOptions<A> extends RequestSpec {
  /** Also gathers what the elements say (response id, usage …), for the span when the stream ends. */
  readonly genAi: GenAi.StreamCall<A>
  /**
   * The body → elements (e.g. server-sent events → chunks). The stream is
   * committed at its first element: every failure before it retries the
   * request (per the retry rule), none after it.
   */
  readonly decode: (
    body: Stream.Stream<Uint8Array, SwitchboardError.StreamRequestError>,
    reply: StreamReply
  ) => Stream.Stream<A, SwitchboardError.StreamRequestError>
  /** Override the `RequestOptions`/config limits for this stream. */
  readonly firstByteTimeout?: Duration.Input | undefined
  readonly idleTimeout?: Duration.Input | undefined
  readonly totalTimeout?: Duration.Input | undefined
}

/**
 * Sends requests to the service with the config's address, key, retries,
 * timeouts and spans: what every API module calls through.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** One JSON call: send, check status, decode, retrying per the rule. */
  readonly call: <A>(options: CallOptions<A>) => Effect.Effect<A, SwitchboardError.RequestError>
  /**
   * A streamed reply, from the request to the body's end: retried until its
   * first element, never after; the span lives until the stream ends (its
   * last element, a failure or an interruption). Interrupting the stream
   * aborts the exchange. Time limits: `first-byte` (per attempt, until the
   * first element), `idle` (silences of the body after its first read) and
   * `total` (from the request to the end, retries included).
   */
  readonly stream: <A>(options: StreamOptions<A>) => Stream.Stream<A, SwitchboardError.StreamRequestError>
  /** The resolved configuration, for capabilities that need its settings. */
  readonly config: SwitchboardConfig.ResolvedConfig
  /**
   * Server-provided text with the configured key and secret header values
   * replaced by `[redacted]`: applied to everything the SDK surfaces from a
   * reply (error messages and bodies, stream errors, task failure reasons).
   */
  readonly redact: (text: string) => string
}

/**
 * The service that sends every request of the API modules (see `Service`).
 *
 * @since 0.1.0
 * @category tags
 */
export class Transport extends Context.Service<Transport, Service>()("@switchboard/core/Transport") {}

// ---------------------------------------------------------------------------
// Settings: the layer's configuration, under any per-call options
// ---------------------------------------------------------------------------

/** A call's settings and its observation, read when it starts. */
interface Begun<A> {
  readonly settings: Settings
  readonly observation: Observe.Observation<A>
  readonly spanOptions: Observe.SpanOptions
  readonly replies: Replies
}

/** What one call runs with, resolved once per layer (and per call with options). */
interface Settings {
  readonly headers: Readonly<Record<string, string>>
  readonly timeoutMillis: number | undefined
  readonly maxBytes: number
  readonly firstByte: Duration.Duration
  readonly idle: Duration.Duration
  readonly total: Duration.Duration
  readonly schedule: (call: Retry.CallClass) => Schedule.Schedule<unknown, SwitchboardError.SwitchboardError>
  readonly redact: (text: string) => string
  /** `headers` with the JSON body's `content-type`, made once rather than by the wire per call. */
  readonly jsonHeaders: Readonly<Record<string, string>>
  /** What `Transport.call` hands the wire. */
  readonly callLimits: HttpWire.Limits
}

/** What every call derives from its settings, made once per layer (and per call with options). */
const derived = (settings: Omit<Settings, "jsonHeaders" | "callLimits">): Settings => ({
  ...settings,
  jsonHeaders: "content-type" in settings.headers ?
    settings.headers :
    { ...settings.headers, "content-type": "application/json" },
  callLimits: { timeoutMillis: settings.timeoutMillis, maxBytes: settings.maxBytes }
})

/**
 * Replaces every secret (the key, secret header values) in a server-provided
 * text. Gateways echo a wrong key in their 401 message.
 */
const redactorOf = (
  apiKey: Option.Option<Redacted.Redacted<string>>,
  headers: Readonly<Record<string, string>>
): (text: string) => string =>
  redactor([
    ...Option.toArray(Option.map(apiKey, Redacted.value)),
    ...Object.entries(headers).filter(([name]) => isSecretHeader(name)).map(([, value]) => value)
  ])

/** A reply's headers as `ResponseMetadata` shows them: secret values and the key redacted. */
const redactedHeaders = (headers: Readonly<Record<string, string>>, redact: (text: string) => string) => {
  const out: Record<string, string> = {}
  for (const name in headers) out[name] = isSecretHeader(name) ? "[redacted]" : redact(headers[name]!)
  return out
}

/** `x-request-id`, as every error, span and metadata shows it: the service's text, so redacted and cut. */
const requestIdOf = (headers: Readonly<Record<string, string>>, redact: (text: string) => string): string | undefined => {
  const id = headers["x-request-id"]
  return id === undefined ? undefined : truncate(redact(id))
}

const lowerCaseNames = (headers: Readonly<Record<string, string>>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value
  return out
}

// Past 2^31 - 1 ms timers fire at once: such a limit (and `Infinity`) is none.
const maxTimerMillis = 2 ** 31 - 1

/** A limit in milliseconds for a wire; `undefined` for none. */
const millisOf = (duration: Duration.Duration): number | undefined => {
  const millis = Duration.toMillis(duration)
  return Number.isFinite(millis) && millis < maxTimerMillis ? millis : undefined
}

const baseSettings = (config: SwitchboardConfig.ResolvedConfig): Settings => {
  const headers: Record<string, string> = { accept: "application/json", ...lowerCaseNames(config.headers) }
  if (Option.isSome(config.apiKey)) headers["authorization"] = `Bearer ${Redacted.value(config.apiKey.value)}`
  const schedules = {
    safe: Retry.schedule(config, "safe"),
    unsent: Retry.schedule(config, "unsent"),
    never: Retry.schedule(config, "never")
  }
  return derived({
    headers,
    timeoutMillis: millisOf(config.timeout),
    maxBytes: config.maxResponseBytes,
    firstByte: config.streamFirstByteTimeout,
    idle: config.streamIdleTimeout,
    total: config.streamTotalTimeout,
    schedule: (call) => schedules[call],
    redact: redactorOf(config.apiKey, config.headers)
  })
}

const optionDuration = (field: keyof RequestOptions.RequestOptions, value: Duration.Input | undefined) =>
  value === undefined ? Result.succeed(undefined) : SwitchboardConfig.duration(`requestOptions.${field}`, value)

/**
 * The layer's settings under per-call options, checked: a bad option is a
 * `ConfigurationError` naming it, `authorization` cannot be replaced, and
 * under `refuseSecrets` (the browser layer's) no secret header is added.
 */
const resolve = (
  config: SwitchboardConfig.ResolvedConfig,
  base: Settings,
  options: RequestOptions.RequestOptions,
  refuseSecrets: ((field: string) => string) | undefined
): Result.Result<Settings, SwitchboardError.ConfigurationError> =>
  Result.gen(function*() {
    const extra = options.headers === undefined ? {} : lowerCaseNames(options.headers)
    yield* SwitchboardConfig.checkHeaders("requestOptions.headers", extra)
    if ("authorization" in extra) {
      return yield* Result.fail(
        new SwitchboardError.ConfigurationError({
          field: "requestOptions.headers.authorization",
          message:
            "requestOptions.headers.authorization cannot replace the layer's key: build a layer with that apiKey instead"
        })
      )
    }
    const secret = refuseSecrets === undefined ? undefined : secretHeaderIn(extra)
    if (refuseSecrets !== undefined && secret !== undefined) {
      const field = `requestOptions.headers.${secret}`
      return yield* Result.fail(new SwitchboardError.ConfigurationError({ field, message: refuseSecrets(field) }))
    }
    const timeout = yield* optionDuration("timeout", options.timeout)
    const retryBaseDelay = yield* optionDuration("retryBaseDelay", options.retryBaseDelay)
    const maxRetryDelay = yield* optionDuration("maxRetryDelay", options.maxRetryDelay)
    const firstByte = yield* optionDuration("streamFirstByteTimeout", options.streamFirstByteTimeout)
    const idle = yield* optionDuration("streamIdleTimeout", options.streamIdleTimeout)
    const total = yield* optionDuration("streamTotalTimeout", options.streamTotalTimeout)
    const maxRetries = options.maxRetries === undefined ?
      config.maxRetries :
      yield* SwitchboardConfig.checkCount("requestOptions.maxRetries", options.maxRetries, 0)
    const scheduleSettings = {
      maxRetries,
      retryBaseDelay: retryBaseDelay ?? config.retryBaseDelay,
      maxRetryDelay: maxRetryDelay ?? config.maxRetryDelay
    }
    const rule = options.retry ?? Retry.standard
    return derived({
      headers: { ...base.headers, ...extra },
      timeoutMillis: timeout === undefined ? base.timeoutMillis : millisOf(timeout),
      maxBytes: base.maxBytes,
      firstByte: firstByte ?? base.firstByte,
      idle: idle ?? base.idle,
      total: total ?? base.total,
      schedule: (call) => Retry.schedule(scheduleSettings, call, rule),
      redact: Object.keys(extra).some((name) => isSecretHeader(name)) ?
        redactorOf(config.apiKey, { ...config.headers, ...extra }) :
        base.redact
    })
  })

/** A per-stream time limit given by the caller, checked, over the settings' one. */
const limitOr = (field: string, input: Duration.Input | undefined, fallback: Duration.Duration) =>
  Effect.fromResult(input === undefined ? Result.succeed(fallback) : SwitchboardConfig.duration(field, input))

// ---------------------------------------------------------------------------
// Replies → typed errors (the one place wire failures and statuses become SDK errors)
// ---------------------------------------------------------------------------

/**
 * `retry-after-ms`, then `Retry-After` in seconds or as an HTTP date, at most
 * `ResponseMetadata.maxReset` (a day): `1e308` seconds is `Infinity` ms, and
 * the error carries what a caller may wait on.
 */
const retryAfterMillis = (headers: Readonly<Record<string, string>>, now: number): number | undefined => {
  const asked = retryAfterAsked(headers, now)
  return asked === undefined ? undefined : Math.min(asked, Duration.toMillis(ResponseMetadata.maxReset))
}

const retryAfterAsked = (headers: Readonly<Record<string, string>>, now: number): number | undefined => {
  const ms = Number(headers["retry-after-ms"])
  if (headers["retry-after-ms"] && Number.isFinite(ms) && ms >= 0) return ms
  const value = headers["retry-after"]
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** `x-should-retry: true|false`: the service's own word on retrying. */
const shouldRetryOf = (headers: Readonly<Record<string, string>>): boolean | undefined => {
  const value = headers["x-should-retry"]?.trim().toLowerCase()
  return value === "true" ? true : value === "false" ? false : undefined
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
const statusFailure = (head: HttpWire.Head, body: Effect.Effect<string>, redact: (text: string) => string) =>
  Effect.flatMap(body, (text) =>
    Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
      const error = Json.serviceErrorOf(text)
      const optional = (value: string | undefined) => (value === undefined ? undefined : truncate(redact(value)))
      return Effect.fail(
        SwitchboardError.fromStatus({
          status: head.status,
          message: error === undefined ? truncate(redact(text.trim())) || statusText(head) : truncate(redact(error.message), 1000),
          requestId: requestIdOf(head.headers, redact),
          type: optional(error?.type),
          code: optional(error?.code),
          param: optional(error?.param),
          retryAfterMillis: retryAfterMillis(head.headers, now),
          shouldRetry: shouldRetryOf(head.headers)
        })
      )
    }))

/** Where an exchange was when its wire failed. */
type Stage =
  | { readonly _tag: "call"; readonly where: string; readonly server: string; readonly timeoutMillis: number | undefined }
  | {
    readonly _tag: "stream"
    readonly where: string
    readonly server: string
    readonly started: boolean
    readonly requestId: string | undefined
  }

/** ` (ECONNRESET)`, or nothing when the error has no code. */
const codeOf = (error: unknown): string => {
  const code = errorCode(error)
  return code === undefined ? "" : ` (${code})`
}

const withId = (requestId: string | undefined) => (requestId === undefined ? {} : { requestId })

interface FailureLimits {
  readonly maxBytes: number
  readonly firstByte: Duration.Duration
  readonly idle: Duration.Duration
  readonly total: Duration.Duration
}

/** A wire failure → its typed error; only a stream's can be a `StreamError`. */
function wireFailure(
  error: HttpWire.WireError,
  stage: Extract<Stage, { _tag: "call" }>,
  settings: FailureLimits
): SwitchboardError.RequestError
function wireFailure(error: HttpWire.WireError, stage: Stage, settings: FailureLimits): SwitchboardError.StreamRequestError
function wireFailure(error: HttpWire.WireError, stage: Stage, settings: FailureLimits): SwitchboardError.StreamRequestError {
  const requestId = stage._tag === "stream" ? stage.requestId : undefined
  switch (error.reason) {
    case "timeout":
      if (error.limit === "first-byte") {
        return new SwitchboardError.TimeoutError({
          message: `${stage._tag === "stream" ? stage.where : "the request"} sent no data within ${
            Duration.toMillis(settings.firstByte)
          } ms`,
          phase: "first-byte"
        })
      }
      if (error.limit === "idle") {
        return new SwitchboardError.TimeoutError({
          message: `the stream sent no data for ${Duration.toMillis(settings.idle)} ms`,
          phase: "idle",
          ...withId(requestId)
        })
      }
      if (error.limit === "total") {
        return new SwitchboardError.TimeoutError({
          message: `the stream took longer than ${Duration.toSeconds(settings.total)} s in all`,
          phase: "total",
          ...withId(requestId)
        })
      }
      return new SwitchboardError.TimeoutError({
        message: stage._tag === "call" ?
          `${stage.where} took longer than ${stage.timeoutMillis} ms` :
          "the request timed out",
        phase: "request"
      })
    case "too-large":
      return new SwitchboardError.ResponseTooLargeError({
        message: `the reply${stage._tag === "call" ? ` to ${stage.where}` : ""} is larger than ${settings.maxBytes} bytes (maxResponseBytes)`,
        limit: settings.maxBytes
      })
    case "decode": {
      const why = error.cause instanceof Error ? error.cause.message : "its bytes do not decode"
      return new SwitchboardError.ResponseDecodeError({
        message: `${stage._tag === "call" ? `the reply to ${stage.where}` : `the stream of ${stage.where}`} cannot be read: ${why}`,
        body: "",
        ...withId(requestId)
      })
    }
    case "response":
      if (stage._tag === "call") {
        return new SwitchboardError.TransportError({ message: `connection lost while reading ${stage.where}`, sent: true })
      }
      return stage.started ?
        new SwitchboardError.StreamError({
          message: `the connection was lost mid-stream${codeOf(error.cause)}`,
          reason: "cut",
          ...withId(requestId)
        }) :
        new SwitchboardError.TransportError({
          message: `connection lost before the first event of the stream${codeOf(error.cause)}`,
          sent: true
        })
    case "redirect":
      // A redirect the wire could not hand on as a status (a browser hides it): a 3xx, never followed.
      return new SwitchboardError.ClientError({
        message: `${stage.where} was answered with a redirect${error.status === undefined ? "" : ` (HTTP ${error.status})`}${
          error.location === undefined ? "" : ` to ${truncate(error.location)}`
        }, which is never followed: is the base URL right?`,
        ...(error.status === undefined ? {} : { status: error.status })
      })
    case "request": {
      const code = errorCode(error.cause)
      // The host and port the connection was for, never the URL's credentials.
      return new SwitchboardError.TransportError({
        message: `connection failed${stage._tag === "call" ? ` on ${stage.where}` : ""} to ${stage.server}${code ? ` (${code})` : ""}`,
        sent: code !== "ECONNREFUSED" && code !== "ENOTFOUND" && code !== "EAI_AGAIN"
      })
    }
  }
}

/** `POST /v1/chat/completions`: what messages say a call was. */
const whereOf = (spec: RequestSpec) => `${spec.method} /v1${spec.path}`

const readJson = <A>(
  response: HttpWire.TextResponse,
  decode: (u: unknown) => Result.Result<A, SchemaIssue.Issue>,
  spec: RequestSpec,
  redact: (text: string) => string
): Effect.Effect<A, SwitchboardError.ResponseDecodeError> => {
  const text = response.text
  // Redacted before it is cut: a key across the cut would leave its start (once: a body may be 32 MiB).
  let redacted: string | undefined
  const shown = (max?: number) => truncate(redacted ??= redact(text), max)
  const decodeError = (message: string, error?: Json.ServiceError) => {
    const fields: Record<string, string> = {}
    const details = { requestId: response.headers["x-request-id"], type: error?.type, code: error?.code, param: error?.param }
    for (const [name, value] of Object.entries(details)) if (value !== undefined) fields[name] = truncate(redact(value))
    return new SwitchboardError.ResponseDecodeError({
      ...fields,
      message: redact(message),
      body: shown(),
      status: response.status
    })
  }
  // The reason first, then where and the start of the body.
  const shapeError = (reason: string) => decodeError(`${reason} (reply to ${whereOf(spec)}: ${shown(80)})`)
  let json: unknown
  try {
    json = Json.parse(text)
  } catch {
    return Effect.fail(shapeError("reply: is not JSON"))
  }
  const decoded = decode(json)
  if (Result.isSuccess(decoded)) return Effect.succeed(decoded.success)
  // A success status with an error body: the service's message, as for any other status (decision 2).
  const error = typeof json === "object" && json !== null && "error" in json ? Json.serviceError(json) : undefined
  return Effect.fail(
    error === undefined ? shapeError(Issue.describe(decoded.failure)) : decodeError(truncate(redact(error.message), 1000), error)
  )
}

/** The start of an opened response's body (up to `maxErrorBytes`), or what arrived of it. */
const bodyText = (response: HttpWire.OpenResponse): Effect.Effect<string> =>
  // Made only when read: most streams succeed, and building the reader costs.
  Effect.suspend(() => Effect.orElseSucceed(HttpWire.readText(response.body, HttpWire.maxErrorBytes), () => ""))

/** A JSON body where a stream was asked for: the service's error, read up to a small limit. */
const jsonInsteadOfStream = (response: HttpWire.OpenResponse, redact: (text: string) => string) =>
  Effect.flatMap(bodyText(response), (body) =>
    Effect.fail(
      new SwitchboardError.StreamError({
        message: truncate(redact(Json.serviceErrorOf(body)?.message ?? `the service sent JSON, not a stream: ${truncate(redact(body), 80)}`), 1000),
        reason: "error-event",
        ...withId(requestIdOf(response.headers, redact))
      })
    ))

const isJson = (response: HttpWire.Head) =>
  /^application\/(?:problem\+)?json/i.test(response.headers["content-type"] ?? "")

// ---------------------------------------------------------------------------
// Attempts and retries
// ---------------------------------------------------------------------------

/**
 * `Effect.retry(attempt, schedule)`, with the schedule's step made only
 * once an attempt has failed: most calls succeed at once, and making the
 * step is most of what `Effect.retry` costs them.
 */
const retrying = <A, E extends SwitchboardError.SwitchboardError, R>(
  attempt: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown, SwitchboardError.SwitchboardError>
): Effect.Effect<A, E, R> =>
  Effect.catch(attempt, (first) =>
    isPaced(first) ? Effect.fail(first) : Effect.flatMap(Schedule.toStepWithSleep(schedule), (step) => {
      // The step sleeps the schedule's delay and succeeds, or fails (`Cause.Done`) when it gives up.
      // A call held past its limit by pacing is never retried: a retry would be held again.
      const next = (error: E): Effect.Effect<A, E, R> =>
        isPaced(error) ? Effect.fail(error) : Effect.matchEffect(step(error), {
          onFailure: () => Effect.fail(error),
          onSuccess: () => Effect.catch(attempt, next)
        })
      return next(first)
    }))

const isPaced = (error: SwitchboardError.SwitchboardError) => error._tag === "TimeoutError" && error.phase === "paced"

/**
 * Runs an attempt in a scope of its own, closed (aborting its exchange) when
 * the attempt fails; a successful one lives as long as the enclosing scope.
 */
const inOwnScope = <A, E, R>(attempt: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Scope.Scope> | Scope.Scope> =>
  Effect.flatMap(Effect.scope, (parent) =>
    Effect.flatMap(Scope.fork(parent, "sequential"), (scope) =>
      Effect.onExit(
        Scope.provide(attempt, scope),
        (exit) => Exit.isFailure(exit) ? Scope.close(scope, exit) : Effect.void
      )))

/** The first batch a pull gives, or `undefined` at the body's end. */
const firstBatch = <A, E>(
  pull: Pull.Pull<Arr.NonEmptyReadonlyArray<A>, E>
): Effect.Effect<Arr.NonEmptyReadonlyArray<A> | undefined, E> =>
  Effect.catchIf(pull, Cause.isDone, () => Effect.undefined) as Effect.Effect<Arr.NonEmptyReadonlyArray<A> | undefined, E>

/** The elements of `first`, then what `pull` gives. */
const startingWith = <A, E>(
  first: Arr.NonEmptyReadonlyArray<A>,
  pull: Pull.Pull<Arr.NonEmptyReadonlyArray<A>, E>
): Stream.Stream<A, E> => {
  let pending: Arr.NonEmptyReadonlyArray<A> | undefined = first
  return Stream.fromPull(Effect.succeed(Effect.suspend(() => {
    if (pending === undefined) return pull
    const batch = pending
    pending = undefined
    return Effect.succeed(batch)
  })))
}

// ---------------------------------------------------------------------------
// Replies: pacing before each attempt, the metadata of each reply
// ---------------------------------------------------------------------------

/** What a call's attempts share: its start, its hook and pacer, its attempts so far. */
interface Replies {
  readonly clock: Clock.Clock
  readonly startMillis: number
  readonly hook: ((response: ResponseMetadata.ResponseMetadata) => Effect.Effect<void>) | undefined
  readonly pacer: Pacing.Pacer | undefined
  attempts: number
  /** When the current attempt's head arrived, on `clock`; cleared as each attempt starts. */
  headMillis: number | undefined
  /** Records the head's arrival: the wire calls it (`HttpWire.Service.text`'s `onHead`). */
  readonly headArrived: () => void
}

const makeReplies = (
  clock: Clock.Clock,
  hook: Replies["hook"],
  pacer: Pacing.Pacer | undefined
): Replies => {
  const replies: Replies = {
    clock,
    startMillis: clock.currentTimeMillisUnsafe(),
    hook,
    pacer,
    attempts: 0,
    headMillis: undefined,
    headArrived: () => {
      replies.headMillis = clock.currentTimeMillisUnsafe()
    }
  }
  return replies
}

/** The metadata of `head`, the reply to attempt `replies.attempts`. */
const metadataOf = (
  replies: Replies,
  head: HttpWire.Head,
  redact: (text: string) => string
): ResponseMetadata.ResponseMetadata => {
  const { headMillis, startMillis } = replies
  const total = Duration.millis(replies.clock.currentTimeMillisUnsafe() - startMillis)
  return {
    status: head.status,
    requestId: requestIdOf(head.headers, redact),
    headers: redactedHeaders(head.headers, redact),
    rateLimits: ResponseMetadata.rateLimitsOf(head.headers),
    processingTime: ResponseMetadata.processingTimeOf(head.headers),
    // Absent only under a wire of the user's that does not report its heads.
    timings: headMillis === undefined ? { total } : { total, firstByte: Duration.millis(headMillis - startMillis) },
    attempts: replies.attempts
  }
}

/** An attempt starts: counted, its head not yet come. */
const nextAttempt = (replies: Replies) => {
  replies.attempts += 1
  replies.headMillis = undefined
}

/**
 * Before an attempt: counts it and, with a pacer, holds it while the budget
 * is spent; gives the milliseconds held. A hold that would pass
 * `limitMillis` fails at once (`TimeoutError`, phase `paced`).
 */
const paced = (replies: Replies, limitMillis: number | undefined, where: string): Effect.Effect<number, SwitchboardError.TimeoutError> =>
  Effect.suspend(() => {
    nextAttempt(replies)
    const pacer = replies.pacer
    if (pacer === undefined) return Effect.succeed(0)
    const now = () => replies.clock.currentTimeMillisUnsafe()
    const started = now()
    const loop: Effect.Effect<number, SwitchboardError.TimeoutError> = Effect.flatMap(Effect.suspend(() => pacer.reserve(now())), (wait) => {
      const held = now() - started
      if (wait <= 0) return Effect.succeed(held)
      if (limitMillis !== undefined && held + wait > limitMillis) {
        return Effect.fail(
          new SwitchboardError.TimeoutError({
            message: `${where} was paced: the rate limit resets in ${wait} ms, past the call's limit of ${limitMillis} ms`,
            phase: "paced"
          })
        )
      }
      return Effect.andThen(Effect.sleep(Duration.millis(wait)), loop)
    })
    return loop
  })

/**
 * One exchange of an attempt, up to its reply's head: the request id and the
 * remaining counts on the span, the reply recorded by the pacer (released
 * however the exchange ends), the hook called.
 */
const exchanged = <H extends HttpWire.Head, E, R>(
  replies: Replies,
  span: Tracer.Span,
  redact: (text: string) => string,
  stream: boolean,
  exchange: Effect.Effect<H, E, R>
): Effect.Effect<H, E, R> => {
  const replied = Effect.tap(exchange, (head) => headArrived(replies, span, redact, stream, head) ?? Effect.void)
  const pacer = replies.pacer
  return pacer === undefined ? replied : Effect.onExit(replied, () => pacer.release)
}

/**
 * `exchanged`'s work at a reply's head: the span's attributes at once, then
 * what the pacer and hook do, or `undefined` when there are none.
 */
const headArrived = (
  replies: Replies,
  span: Tracer.Span,
  redact: (text: string) => string,
  stream: boolean,
  head: HttpWire.Head
): Effect.Effect<void> | undefined => {
  // An opened exchange succeeds at its head; a JSON call's wire said when it came.
  if (stream) replies.headArrived()
  const requestId = requestIdOf(head.headers, redact)
  if (requestId !== undefined) span.attribute("switchboard.request_id", requestId)
  const remainingRequests = ResponseMetadata.countOf(head.headers["x-ratelimit-remaining-requests"])
  if (remainingRequests !== undefined) span.attribute("switchboard.ratelimit.remaining_requests", remainingRequests)
  const remainingTokens = ResponseMetadata.countOf(head.headers["x-ratelimit-remaining-tokens"])
  if (remainingTokens !== undefined) span.attribute("switchboard.ratelimit.remaining_tokens", remainingTokens)
  const { hook, pacer } = replies
  if (hook === undefined && pacer === undefined) return undefined
  const metadata = metadataOf(replies, head, redact)
  const recorded = pacer === undefined ? Effect.void : pacer.record(metadata.rateLimits, replies.clock.currentTimeMillisUnsafe())
  return hook === undefined ? recorded : Effect.andThen(recorded, hook(metadata))
}

/** The failures a reply caused carry its metadata (`ResponseMetadata.ofError`). */
const answered = <A, E, R>(
  replies: Replies,
  head: HttpWire.Head,
  redact: (text: string) => string,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.mapError(effect, (error) => ResponseMetadata.attach(error, metadataOf(replies, head, redact)))

const httpAttributes = (options: RequestSpec): Record<string, unknown> => ({
  "http.request.method": options.method,
  "url.path": `/v1${options.path}`
})

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/**
 * Builds the transport from the configuration and an `HttpWire`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const config = yield* SwitchboardConfig.SwitchboardConfig
  const wire = yield* HttpWire.HttpWire
  const base = baseSettings(config)
  const refuseSecrets = yield* RefuseSecretHeaders

  const site = Observe.site(config.apiUrl)
  // Where connection errors say they were going: the host and port, never the URL's credentials.
  const server = `${site.server.address.includes(":") ? `[${site.server.address}]` : site.server.address}:${site.server.port}`

  /**
   * The settings of a call starting now on `fiber` (the layer's, unless a
   * scope set options) and its observation, all read from the fiber at once.
   */
  const started = <A>(
    fiber: Fiber.Fiber<unknown, unknown>,
    genAi: GenAi.Call<A>,
    options: RequestSpec
  ): Result.Result<Begun<A>, SwitchboardError.ConfigurationError> => {
    const requested = fiber.getRef(RequestOptions.CurrentRequestOptions)
    const resolved = RequestOptions.isEmpty(requested) || RequestOptions.onlyHook(requested) ?
      Result.succeed(base) :
      resolve(config, base, requested, refuseSecrets)
    if (Result.isFailure(resolved)) return Result.fail(resolved.failure)
    const settings = resolved.success
    const { observation, spanOptions } = Observe.start(
      genAi,
      site,
      settings.redact,
      httpAttributes(options),
      Observe.capturing(fiber)
    )
    const replies = makeReplies(fiber.getRef(Clock.Clock), requested.onResponse, fiber.getRef(Pacing.CurrentPacer))
    return Result.succeed({ settings, observation, spanOptions, replies })
  }

  /** `started`, as an effect. */
  const begin = <A>(genAi: GenAi.Call<A>, options: RequestSpec) =>
    Effect.withFiber<Begun<A>, SwitchboardError.ConfigurationError>((fiber) => Effect.fromResult(started(fiber, genAi, options)))

  const request = (options: RequestSpec, settings: Settings): HttpWire.Request => {
    if (options.body === undefined) return { method: options.method, url: config.apiUrl + options.path, headers: settings.headers }
    const body = HttpWire.json(JSON.stringify(options.body))
    return { method: options.method, url: config.apiUrl + options.path, headers: settings.jsonHeaders, body }
  }

  /** The status on the span; a status outside 2xx → its typed error, never a success. */
  const checkStatus = (span: Tracer.Span, head: HttpWire.Head, body: Effect.Effect<string>, settings: Settings) => {
    span.attribute("http.response.status_code", head.status)
    return head.status >= 200 && head.status < 300 ? Effect.void : statusFailure(head, body, settings.redact)
  }

  // A call is a flat chain: no generator, and no step a call without a hook
  // or pacer does not need (docs/decisions.md, "A call's flat chain").
  const call = <A>(options: CallOptions<A>): Effect.Effect<A, SwitchboardError.RequestError> =>
    Effect.withFiber((fiber) => {
      const begun = started(fiber, options.genAi, options)
      if (Result.isFailure(begun)) return Effect.fail(begun.failure)
      const { observation, replies, settings, spanOptions } = begun.success
      return Observe.observeCall(observation, spanOptions, fiber, (span) => {
        // Only what the exchange needs is made per call; what errors say is made when one occurs.
        const req = request(options, settings)
        const stage = (): Extract<Stage, { _tag: "call" }> => ({
          _tag: "call",
          where: whereOf(options),
          server,
          timeoutMillis: settings.timeoutMillis
        })
        const limitsAfter = (held: number): HttpWire.Limits =>
          held === 0 || settings.timeoutMillis === undefined ?
            settings.callLimits :
            { ...settings.callLimits, timeoutMillis: Math.max(1, settings.timeoutMillis - held) }
        // The status on the span; a status outside 2xx is its typed error, never a success.
        const read = (response: HttpWire.TextResponse): Effect.Effect<A, SwitchboardError.RequestError> => {
          span.attribute("http.response.status_code", response.status)
          const result: Effect.Effect<A, SwitchboardError.RequestError> = response.status >= 200 && response.status < 300 ?
            readJson(response, options.decode, options, settings.redact) :
            statusFailure(response, Effect.succeed(response.text), settings.redact)
          // A success has no metadata to carry.
          return Exit.isExit(result) && Exit.isSuccess(result) ? result : answered(replies, response, settings.redact, result)
        }
        const text = (held: number) =>
          Effect.mapError(wire.text(req, limitsAfter(held), replies.headArrived), (error) => wireFailure(error, stage(), settings))
        // Without a pacer, the head's work and the reading are one step (`exchanged` otherwise).
        const exchange = replies.pacer === undefined ?
          (held: number) =>
            Effect.flatMap(text(held), (response) => {
              const recorded = headArrived(replies, span, settings.redact, false, response)
              return recorded === undefined ? read(response) : Effect.flatMap(recorded, () => read(response))
            }) :
          (held: number) => Effect.flatMap(exchanged(replies, span, settings.redact, false, text(held)), read)
        const attempt = replies.pacer === undefined ?
          Effect.suspend(() => {
            nextAttempt(replies)
            return exchange(0)
          }) :
          Effect.flatMap(paced(replies, settings.timeoutMillis, whereOf(options)), exchange)
        return retrying(attempt, settings.schedule(options.retry ?? "safe"))
      })
    })

  const stream = <A>(options: StreamOptions<A>): Stream.Stream<A, SwitchboardError.StreamRequestError> =>
    Stream.unwrap(Effect.gen(function*() {
      const { observation, replies, settings, spanOptions } = yield* begin(options.genAi, options)
      const firstByte = yield* limitOr("firstByteTimeout", options.firstByteTimeout, settings.firstByte)
      const idle = yield* limitOr("idleTimeout", options.idleTimeout, settings.idle)
      const total = yield* limitOr("totalTimeout", options.totalTimeout, settings.total)
      // Ends when the stream does, with its exit: after the last element, a failure or an interruption.
      const span = yield* Effect.makeSpanScoped(observation.name, spanOptions)
      const clock = yield* Effect.clockWith(Effect.succeed)
      const startMillis = clock.currentTimeMillisUnsafe()
      const limits = { maxBytes: settings.maxBytes, firstByte, idle, total }
      const where = whereOf(options)
      const req = request(options, settings)
      const firstByteMillis = millisOf(firstByte)
      const idleMillis = millisOf(idle)
      const totalMillis = millisOf(total)
      const deadline = totalMillis === undefined ? undefined : startMillis + totalMillis
      let started = false
      const stage = (requestId: string | undefined): Stage => ({ _tag: "stream", where, server, started, requestId })

      // Every limit is the wire's: the first-byte one runs until `commit`, at the first element.
      const attempt = inOwnScope(Effect.gen(function*() {
        // What is left of the total limit: retries and their waits count too.
        const leftAt = () => deadline === undefined ? undefined : deadline - clock.currentTimeMillisUnsafe()
        const before = leftAt()
        if (before !== undefined && before <= 0) return yield* Effect.fail(wireFailure(HttpWire.timeout("total"), stage(undefined), limits))
        yield* paced(replies, before, where)
        const left = leftAt()
        const response = yield* exchanged(
          replies,
          span,
          settings.redact,
          true,
          Effect.mapError(
            wire.open(req, { firstByteMillis, idleMillis, totalMillis: left }),
            (error) => wireFailure(error, stage(undefined), limits)
          )
        )
        return yield* answered(replies, response, settings.redact, Effect.gen(function*() {
          yield* checkStatus(span, response, bodyText(response), settings)
          if (isJson(response)) return yield* jsonInsteadOfStream(response, settings.redact)
          const requestId = requestIdOf(response.headers, settings.redact)
          const body = Stream.mapError(response.body, (error) => wireFailure(error, stage(requestId), limits))
          const elements = options.decode(body, {
            headers: response.headers,
            requestId,
            span,
            redact: settings.redact,
            done: response.done ?? constVoid
          })
          // Not `Stream.toPull`: it runs every later pull under `provideContext` (a copy of the
          // whole context, each read) and a semaphore; the elements need no service and one
          // consumer pulls them in turn (docs/decisions.md, "A stream's later pulls skip").
          const pull = yield* Channel.toPullScoped(Stream.toChannel(elements), yield* Effect.scope)
          const first = yield* firstBatch(pull)
          response.commit()
          return { first, pull }
        }))
      }))
      const { first, pull } = yield* Effect.withParentSpan(retrying(attempt, settings.schedule(options.retry ?? "safe")), span, spanOptions).pipe(
        // A stream that never started still ends its call: error.type and the duration.
        Effect.onExit((exit) => Exit.isFailure(exit) ? Observe.finish(observation, span, startMillis, { exit, reply: undefined }) : Effect.void)
      )
      started = true
      const elements = first === undefined ? Stream.empty : startingWith(first, pull)
      return Observe.observeStream(observation, span, startMillis, options.genAi.facts(observation.capture), elements, () => clock.currentTimeMillisUnsafe())
    }))

  return Transport.of({ call, stream, config, redact: base.redact })
})

/**
 * The `Transport` over the config and an `HttpWire`: what every capability's
 * layer needs.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Transport, never, SwitchboardConfig.SwitchboardConfig | HttpWire.HttpWire> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(Transport, make))
