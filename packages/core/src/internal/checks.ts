/**
 * The checks of every duration and count a caller passes (a layer option, a
 * per-call option, a poll's deadline, a batch size, a CLI flag): a value
 * that cannot work is a `ConfigurationError` naming it, where it enters.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { ConfigurationError } from "../SwitchboardError.js"

/**
 * A duration given by a caller (a time limit, a wait): a `Duration.Input`
 * Effect can read, not negative and without NaN anywhere in it (Effect would
 * read NaN as 0, a limit every call reaches at once), and at least
 * `minimum` when given. `Infinity` is no limit. The one check of every
 * duration option; a text Effect cannot read (`"10 minuts"`) is refused
 * here rather than thrown later.
 *
 * @internal
 */
export const duration = (
  field: string,
  input: unknown,
  minimum: Duration.Duration = Duration.zero
): Result.Result<Duration.Duration, ConfigurationError> => {
  const invalid = () =>
    Result.fail(
      new ConfigurationError({
        field,
        message: Duration.isZero(minimum)
          ? `${field} must be a duration of 0 or more, e.g. "30 seconds"`
          : `${field} must be a duration of ${Duration.format(minimum)} or more, e.g. "30 seconds"`
      })
    )
  const parts = Array.isArray(input) ? input : Duration.isDuration(input) ? [] : typeof input === "object" && input !== null ? Object.values(input) : [input]
  if (parts.some((n) => typeof n === "number" && Number.isNaN(n))) return invalid()
  if (typeof input !== "number" && typeof input !== "string" && typeof input !== "bigint" && (typeof input !== "object" || input === null)) {
    return invalid()
  }
  let parsed: Option.Option<Duration.Duration>
  try {
    parsed = Duration.fromInput(input as Duration.Input)
  } catch {
    return invalid()
  }
  return Option.match(parsed, {
    onNone: invalid,
    onSome: (d) => (Duration.toMillis(d) >= 0 && Duration.isGreaterThanOrEqualTo(d, minimum) ? Result.succeed(d) : invalid())
  })
}

/**
 * A count given by a caller: a safe integer of `min` or more.
 *
 * @internal
 */
export const count = (field: string, value: unknown, min: number): Result.Result<number, ConfigurationError> =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= min
    ? Result.succeed(value)
    : Result.fail(new ConfigurationError({ field, message: `${field} must be an integer of ${min} or more` }))
