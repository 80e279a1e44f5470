/**
 * What a reply says besides its body: the status, the request id to quote to
 * the provider's support, the headers (secrets redacted), the rate limits the
 * service announced, the time it spent, the client's own timings and the
 * number of attempts. Every call has one, success or failure, reached
 * without changing how the call is written:
 *
 * - `withResponse(effect)` gives `[value, metadata]`; `withResponse(stream)`
 *   gives `[stream, metadata]` as soon as the reply's headers arrive, before
 *   the first chunk;
 * - `RequestOptions.onResponse` is called with each reply (logging, metrics);
 * - `ofError(error)`: the metadata of the reply an error answered.
 *
 * Headers that do not parse are read as absent, never as a failure
 * (`docs/metadata-and-pacing.md`).
 *
 * @since 1.1.0
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as RequestOptions from "./RequestOptions.js"

/**
 * The `x-ratelimit-*` headers of a reply, each absent when the service sent
 * none or one that does not parse: counts are whole numbers from 0 up,
 * resets Go-style durations (`12ms`, `1m30s`, `6m0s`, `0.5s`) or bare
 * seconds, at most `maxReset`. A header sent twice arrives joined
 * (`100, 100`) and is absent.
 *
 * @since 1.1.0
 * @category models
 */
export interface RateLimits {
  /** `x-ratelimit-limit-requests`: requests allowed per window. */
  readonly limitRequests?: number | undefined
  /** `x-ratelimit-limit-tokens`: tokens allowed per window. */
  readonly limitTokens?: number | undefined
  /** `x-ratelimit-remaining-requests`. */
  readonly remainingRequests?: number | undefined
  /** `x-ratelimit-remaining-tokens`. */
  readonly remainingTokens?: number | undefined
  /** `x-ratelimit-reset-requests`: until the request budget is whole again. */
  readonly resetRequests?: Duration.Duration | undefined
  /** `x-ratelimit-reset-tokens`: until the token budget is whole again. */
  readonly resetTokens?: Duration.Duration | undefined
}

/**
 * The client's own clock, from the call's start (its first attempt's).
 *
 * @since 1.1.0
 * @category models
 */
export interface Timings {
  /**
   * Until the reply was whole: the body read (a JSON call) or the headers
   * (a stream, whose metadata is handed over then); for an error's
   * metadata, until the error.
   */
  readonly total: Duration.Duration
  /**
   * Until the answering reply's headers arrived, at most `total`: every call,
   * JSON or stream, on every wire of the SDK. Absent only under a wire of
   * your own that does not report its heads (`HttpWire.Service`'s `onHead`).
   */
  readonly firstByte?: Duration.Duration | undefined
}

/**
 * One reply's metadata.
 *
 * @since 1.1.0
 * @category models
 */
export interface ResponseMetadata {
  readonly status: number
  /** `x-request-id`. */
  readonly requestId: string | undefined
  /**
   * Every header, names in lower case; the values of secret headers (the
   * transport's one list: names with auth, key, token, secret, cookie,
   * password, session, but not the rate-limit headers) are `[redacted]`, and
   * the key is redacted wherever it appears.
   */
  readonly headers: Readonly<Record<string, string>>
  readonly rateLimits: RateLimits
  /** `openai-processing-ms`: the time the service says it spent. */
  readonly processingTime: Duration.Duration | undefined
  readonly timings: Timings
  /** The attempt this reply answered, from 1: for the reply a call ends with, how many attempts it made. */
  readonly attempts: number
}

/**
 * The longest reset read: a day. A longer one (a bad header, an epoch time)
 * is absent rather than a reason to hold calls.
 *
 * @since 1.1.0
 * @category parsing
 */
export const maxReset: Duration.Duration = Duration.days(1)

const unitMillis: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, "µs": 0.001, ns: 0.000001 }
const goDuration = /^(?:\d+(?:\.\d+)?(?:h|ms|m|s|us|µs|ns))+$/
const part = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g

/**
 * A reset as the services write it: a Go-style duration (`12ms`, `1m30s`,
 * `6m0s`, `2m59.56s`) or bare seconds (`20`, `0.5`); `undefined` for
 * anything else, a negative value or one past `maxReset`.
 *
 * @since 1.1.0
 * @category parsing
 */
export const parseReset = (text: string | undefined): Duration.Duration | undefined => {
  if (text === undefined) return undefined
  const trimmed = text.trim()
  let millis: number
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) {
    millis = Number(trimmed) * 1000
  } else if (goDuration.test(trimmed)) {
    millis = 0
    for (const [, amount, unit] of trimmed.matchAll(part)) millis += Number(amount) * unitMillis[unit!]!
  } else {
    return undefined
  }
  return Number.isFinite(millis) && millis <= Duration.toMillis(maxReset) ? Duration.millis(millis) : undefined
}

/**
 * A whole count from 0 up (a rate-limit count), or `undefined`.
 *
 * @since 1.1.0
 * @category parsing
 */
export const countOf = (text: string | undefined): number | undefined => {
  if (text === undefined || !/^\s*\d{1,15}\s*$/.test(text)) return undefined
  return Number(text)
}

/**
 * The rate limits of a reply's headers (names in lower case).
 *
 * @since 1.1.0
 * @category parsing
 */
export const rateLimitsOf = (headers: Readonly<Record<string, string>>): RateLimits => {
  const out: { -readonly [K in keyof RateLimits]: RateLimits[K] } = {}
  const limitRequests = countOf(headers["x-ratelimit-limit-requests"])
  const limitTokens = countOf(headers["x-ratelimit-limit-tokens"])
  const remainingRequests = countOf(headers["x-ratelimit-remaining-requests"])
  const remainingTokens = countOf(headers["x-ratelimit-remaining-tokens"])
  const resetRequests = parseReset(headers["x-ratelimit-reset-requests"])
  const resetTokens = parseReset(headers["x-ratelimit-reset-tokens"])
  if (limitRequests !== undefined) out.limitRequests = limitRequests
  if (limitTokens !== undefined) out.limitTokens = limitTokens
  if (remainingRequests !== undefined) out.remainingRequests = remainingRequests
  if (remainingTokens !== undefined) out.remainingTokens = remainingTokens
  if (resetRequests !== undefined) out.resetRequests = resetRequests
  if (resetTokens !== undefined) out.resetTokens = resetTokens
  return out
}

/**
 * `openai-processing-ms` as a duration, when it is a number from 0 up.
 *
 * @since 1.1.0
 * @category parsing
 */
export const processingTimeOf = (headers: Readonly<Record<string, string>>): Duration.Duration | undefined => {
  const text = headers["openai-processing-ms"]
  if (text === undefined || !/^\s*\d+(?:\.\d+)?\s*$/.test(text)) return undefined
  const millis = Number(text)
  return millis <= Duration.toMillis(maxReset) ? Duration.millis(millis) : undefined
}

// Errors are the SDK's own objects: the metadata rides beside them, not in their fields.
const byError = new WeakMap<object, ResponseMetadata>()

/**
 * The metadata of the reply `error` answered (a status, a body that does not
 * decode, a stream's error before its first chunk), or `undefined` for an
 * error no reply came with (a refused connection, a time limit, bad input).
 *
 * @since 1.1.0
 * @category errors
 */
export const ofError = (error: unknown): ResponseMetadata | undefined =>
  typeof error === "object" && error !== null ? byError.get(error) : undefined

/**
 * Records that `error` answered the reply `metadata` describes (`Transport`
 * does, for every error a reply caused).
 *
 * @since 1.1.0
 * @category errors
 */
export const attach = <E>(error: E, metadata: ResponseMetadata): E => {
  if (typeof error === "object" && error !== null && !byError.has(error)) byError.set(error, metadata)
  return error
}

/**
 * The defect of `withResponse` over an effect or stream that made no call to
 * the service: a program error, not a failure of the service.
 *
 * @since 1.1.0
 * @category errors
 */
export class NoResponseError extends Error {
  /**
   * The error's tag, for `Effect.catchTag`.
   *
   * @since 1.1.0
   */
  readonly _tag = "NoResponseError"
  constructor() {
    super("withResponse: the effect made no call to the service, so there is no reply to describe")
  }
}

/**
 * Runs a call (or any effect making calls) and gives its value beside the
 * metadata of the last reply it got. Over a stream: an effect, done when the
 * reply's headers arrive (before the first chunk), giving the stream (the
 * same elements, already started) beside the metadata; the stream lives in
 * the effect's scope.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as ResponseMetadata from "@switchboard/core/ResponseMetadata"
 * import * as Effect from "effect/Effect"
 *
 * const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] }
 * const program = Effect.gen(function*() {
 *   const [completion, response] = yield* Chat.create(request).pipe(ResponseMetadata.withResponse)
 *   console.log(response.requestId, response.rateLimits.remainingRequests)
 *   return completion
 * })
 * ```
 * @since 1.1.0
 * @category combinators
 */
export const withResponse: {
  <A, E, R>(self: Stream.Stream<A, E, R>): Effect.Effect<readonly [Stream.Stream<A, E>, ResponseMetadata], E, R | Scope.Scope>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<readonly [A, ResponseMetadata], E, R>
} = (<A, E, R>(self: Effect.Effect<A, E, R> | Stream.Stream<A, E, R>) =>
  Stream.isStream(self) ? streamWithResponse(self) : effectWithResponse(self)) as never

const effectWithResponse = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<readonly [A, ResponseMetadata], E, R> =>
  Effect.suspend(() => {
    let last: ResponseMetadata | undefined
    const onResponse = (metadata: ResponseMetadata) =>
      Effect.sync(() => {
        last = metadata
      })
    return Effect.flatMap(
      RequestOptions.withRequestOptions(self, { onResponse }),
      (value) => last === undefined ? Effect.die(new NoResponseError()) : Effect.succeed([value, last] as const)
    )
  })

const isSuccess = (metadata: ResponseMetadata) => metadata.status >= 200 && metadata.status < 300

const streamWithResponse = <A, E, R>(
  self: Stream.Stream<A, E, R>
): Effect.Effect<readonly [Stream.Stream<A, E>, ResponseMetadata], E, R | Scope.Scope> =>
  Effect.gen(function*() {
    const headers = yield* Deferred.make<ResponseMetadata>()
    // The first successful reply's headers: a refused attempt before it is retried.
    const onResponse = (metadata: ResponseMetadata) =>
      isSuccess(metadata) ? Effect.asVoid(Deferred.succeed(headers, metadata)) : Effect.void
    const pull = yield* Stream.toPull(RequestOptions.withRequestOptions(self, { onResponse }))
    // Pulling the first batch sends the request; its headers come before it.
    const first = yield* Effect.forkScoped(pull)
    const metadata = yield* Effect.raceFirst(
      Deferred.await(headers),
      // A first batch without a successful reply: the stream made no call.
      Effect.flatMap(
        Fiber.join(first),
        () => Deferred.isDoneUnsafe(headers) ? Deferred.await(headers) : Effect.die(new NoResponseError())
      )
    ).pipe(
      Effect.catchIf(Cause.isDone, () => Effect.die(new NoResponseError()))
    )
    let pending = true
    const rest = Stream.fromPull(Effect.succeed(Effect.suspend(() => {
      if (!pending) return pull
      pending = false
      return Fiber.join(first)
    })))
    return [rest, metadata] as const
  }) as Effect.Effect<readonly [Stream.Stream<A, E>, ResponseMetadata], E, R | Scope.Scope>
