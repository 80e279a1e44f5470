/**
 * The one place that talks HTTP: base URL + `/v1`, the bearer header, JSON
 * bodies, status → typed error, retries (decision 6), timeouts (decision 7)
 * and a span per call. Every capability goes through it.
 *
 * @since 0.1.0
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { errorCode } from "./internal/errorCode.js"
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
   * the same retries as `call`. The body is left unread, for streaming.
   */
  readonly open: (
    options: OpenOptions
  ) => Effect.Effect<HttpClientResponse.HttpClientResponse, SwitchboardError.SwitchboardError>
  /**
   * Like `open`, but an attempt lasts until `commit` succeeds on the response
   * (e.g. the first bytes of a stream arrived): a failure before then retries
   * the request, nothing after it does.
   */
  readonly openWith: <A, R>(
    options: OpenOptions,
    commit: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, SwitchboardError.SwitchboardError, R>
  ) => Effect.Effect<A, SwitchboardError.SwitchboardError, R>
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


const transportError = (
  error: HttpClientError.HttpClientError,
  where: string
): SwitchboardError.TransportError => {
  const code = errorCode(error.cause)
  return new SwitchboardError.TransportError({
    message: `connection failed on ${where}${code ? ` (${code})` : ""}`,
    sent: code !== "ECONNREFUSED" && code !== "ENOTFOUND" && code !== "EAI_AGAIN"
  })
}

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

/** A status ≥ 400 → its typed error with the service's message (decision 2). */
const failure = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.flatMap(
    Effect.orElseSucceed(response.text, () => ""),
    (text) =>
      Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
        const body = Option.getOrUndefined(decodeErrorBody(text))?.error
        return Effect.fail(
          SwitchboardError.fromStatus({
            status: response.status,
            message: body?.message ?? (truncate(text.trim()) || `HTTP ${response.status}`),
            requestId: response.headers["x-request-id"],
            type: stringOf(body?.type),
            code: stringOf(body?.code),
            param: stringOf(body?.param),
            retryAfterMillis: retryAfterMillis(response.headers, now)
          })
        )
      })
  )

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

/**
 * Builds the transport from the configuration and the platform's `HttpClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const config = yield* SwitchboardConfig
  // Our own span below carries method, path, model and status; the platform's
  // span would repeat it per attempt.
  const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
  const headers: Record<string, string> = { accept: "application/json", ...config.headers }
  if (Option.isSome(config.apiKey)) headers["authorization"] = `Bearer ${Redacted.value(config.apiKey.value)}`
  const timeoutMillis = Duration.toMillis(config.timeout)

  const request = (options: Omit<CallOptions<unknown>, "decode">) =>
    HttpClientRequest.make(options.method)(config.apiUrl + options.path, {
      headers,
      ...(options.body === undefined ? {} : { body: HttpBody.text(JSON.stringify(options.body), "application/json") })
    })

  const send = (options: Omit<CallOptions<unknown>, "decode">) => {
    const where = `${options.method} /v1${options.path}`
    const req = request(options)
    return Effect.flatMap(
      Effect.mapError(client.execute(req), (e) => transportError(e, where)),
      (response) =>
        Effect.zipRight(
          Effect.annotateCurrentSpan("http.response.status_code", response.status),
          response.status >= 400 ? failure(response) : Effect.succeed(response)
        )
    )
  }

  const withPolicy = <A, R>(
    options: Omit<CallOptions<unknown>, "decode">,
    attempt: Effect.Effect<A, SwitchboardError.SwitchboardError, R>
  ) =>
    attempt.pipe(
      Effect.retry(retrySchedule(config, options.retry ?? "transient")),
      Effect.withSpan(options.span, {
        kind: "client",
        attributes: {
          "http.request.method": options.method,
          "url.path": `/v1${options.path}`,
          ...(options.model ? { "gen_ai.request.model": options.model } : {})
        }
      })
    )

  const timeout = (phase: "request", where: string) => () =>
    new SwitchboardError.TimeoutError({ message: `${where} took longer than ${timeoutMillis} ms`, phase })

  const call = <A>(options: CallOptions<A>): Effect.Effect<A, SwitchboardError.SwitchboardError> => {
    const where = `${options.method} /v1${options.path}`
    const attempt = Effect.flatMap(send(options), (response) => readJson(response, options.decode, where)).pipe(
      Effect.timeoutFail({ duration: config.timeout, onTimeout: timeout("request", where) })
    )
    return withPolicy(options, attempt)
  }

  const openWith = <A, R>(
    options: OpenOptions,
    commit: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, SwitchboardError.SwitchboardError, R>
  ): Effect.Effect<A, SwitchboardError.SwitchboardError, R> => {
    const attempt = Effect.flatMap(send(options), commit)
    if (options.firstByteTimeout === undefined) return withPolicy(options, attempt)
    const limit = Duration.decode(options.firstByteTimeout)
    const where = `${options.method} /v1${options.path}`
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

const readJson = <A>(
  response: HttpClientResponse.HttpClientResponse,
  decode: (u: unknown) => Either.Either<A, ParseResult.ParseError>,
  where: string
): Effect.Effect<A, SwitchboardError.SwitchboardError> =>
  Effect.flatMap(
    Effect.mapError(
      response.text,
      () => new SwitchboardError.TransportError({ message: `connection lost while reading ${where}`, sent: true })
    ),
    (text) => {
      const requestId = response.headers["x-request-id"]
      const decodeError = (message: string) =>
        new SwitchboardError.ResponseDecodeError({
          message: `${where}: ${message}`,
          body: truncate(text),
          status: response.status,
          ...(requestId === undefined ? {} : { requestId })
        })
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return Effect.fail(decodeError(`response is not JSON: ${truncate(text, 80)}`))
      }
      const decoded = decode(json)
      return Either.isRight(decoded)
        ? Effect.succeed(decoded.right)
        : Effect.fail(decodeError(`unexpected response shape: ${truncate(ParseResult.TreeFormatter.formatErrorSync(decoded.left), 300)}`))
    }
  )

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Transport, never, SwitchboardConfig | HttpClient.HttpClient> = Layer.effect(
  Transport,
  make
)
