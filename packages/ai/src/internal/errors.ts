/**
 * Switchboard's typed errors → `AiError`s, the original kept as `cause` so a
 * caller can still match on it (`error.cause._tag === "RateLimitError"`).
 *
 * @internal
 */
import * as AiError from "@effect/ai/AiError"
import type { SwitchboardError } from "@switchboard/core/SwitchboardError"

/** What failed, as `AiError`s name it. */
export interface Site {
  readonly module: string
  readonly method: string
}

const describe = (error: SwitchboardError): string => {
  const status = "status" in error && error.status !== undefined ? ` (${error.status})` : ""
  return `${error._tag}${status}: ${error.message}`
}

/**
 * `InvalidRequestError` and `ConfigurationError` (nothing was sent) → `MalformedInput`; a reply that
 * is not what the protocol says → `MalformedOutput`; the rest (statuses,
 * time limits, connections, broken streams) → `UnknownError`. Only
 * `UnknownError`, `MalformedInput` and `MalformedOutput` carry a `cause`.
 */
export const toAiError = (site: Site) => (error: SwitchboardError): AiError.AiError => {
  const fields = { ...site, description: describe(error), cause: error }
  switch (error._tag) {
    case "InvalidRequestError":
    case "ConfigurationError":
      return new AiError.MalformedInput(fields)
    case "ResponseDecodeError":
      return new AiError.MalformedOutput(fields)
    default:
      return new AiError.UnknownError(fields)
  }
}
