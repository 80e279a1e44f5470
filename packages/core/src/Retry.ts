/**
 * The one rule for repeating a failed attempt, and the wait between attempts
 * (decision 6, `docs/errors-and-retries.md`). `Transport` asks it for every
 * call; `Switchboard.withRequestOptions({ retry })` replaces it for a scope.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { isTransient, type SwitchboardError } from "./SwitchboardError.js"

/**
 * What repeating a call may cost, given by the capability that makes it:
 * - `safe`: nothing (reads, chat, embeddings: a repeat is just another answer);
 * - `unsent`: money or a duplicate, so only when the request surely did not
 *   reach the service (video submission, image generation);
 * - `never`: any repeat is wrong.
 *
 * @since 0.1.0
 * @category models
 */
export type CallClass = "safe" | "unsent" | "never"

/**
 * Whether an attempt that failed with `error` may be repeated, for a call of
 * class `call`.
 *
 * @since 0.1.0
 * @category models
 */
export type Rule = (error: SwitchboardError, call: CallClass) => boolean

/**
 * Failures where the request surely did not reach the service: a 429 (the
 * service refused it before doing any work) and a connection that was never
 * made.
 *
 * @since 0.1.0
 * @category guards
 */
export const surelyUnsent = (error: SwitchboardError): boolean =>
  error._tag === "RateLimitError" || (error._tag === "TransportError" && !error.sent)

/**
 * The rule every call uses unless told otherwise: a `safe` call is repeated
 * after any transient failure (`SwitchboardError.isTransient`, which honours
 * the service's `x-should-retry`); an `unsent` call only when the failure is
 * transient and the request surely unsent, or the service said
 * `x-should-retry: true`; a `never` call never.
 *
 * @since 0.1.0
 * @category rules
 */
export const standard: Rule = (error, call) => {
  if (call === "never" || !isTransient(error)) return false
  if (call === "safe") return true
  return surelyUnsent(error) || ("shouldRetry" in error && error.shouldRetry === true)
}

/**
 * The settings the wait between attempts is made of (`SwitchboardConfig`'s).
 *
 * @since 0.1.0
 * @category models
 */
export interface ScheduleSettings {
  readonly maxRetries: number
  readonly retryBaseDelay: Duration.Input
  readonly maxRetryDelay: Duration.Input
}

const retryAfterOf = (error: SwitchboardError): number | undefined =>
  error._tag === "RateLimitError" || error._tag === "ServerError" ? error.retryAfterMillis : undefined

/**
 * Jittered exponential backoff for at most `maxRetries` retries, while `rule`
 * allows one, waiting what the service asked for in `Retry-After` when it
 * did, capped by `maxRetryDelay`.
 *
 * @since 0.1.0
 * @category schedules
 */
export const schedule = (
  settings: ScheduleSettings,
  call: CallClass = "safe",
  rule: Rule = standard
): Schedule.Schedule<unknown, SwitchboardError> => {
  const maxDelay = Duration.fromInputUnsafe(settings.maxRetryDelay)
  return Schedule.exponential(settings.retryBaseDelay).pipe(
    Schedule.jittered,
    Schedule.upTo({ times: settings.maxRetries }),
    Schedule.setInputType<SwitchboardError>(),
    Schedule.while(({ input }) => rule(input, call)),
    Schedule.modifyDelay(({ duration, input }) => {
      const asked = retryAfterOf(input)
      return Effect.succeed(Duration.min(asked === undefined ? duration : Duration.millis(asked), maxDelay))
    })
  )
}
