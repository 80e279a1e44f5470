/**
 * Switchboard's typed errors → `AiError`s, as `@effect/ai`'s own providers
 * (`@effect/ai-openai`) report them: a status is an `HttpResponseError`, a
 * failed connection an `HttpRequestError`. The original is kept as `cause`.
 *
 * @internal
 */
import * as AiError from "@effect/ai/AiError"
import { truncate } from "@switchboard/core/internal/text"
import type { SwitchboardError } from "@switchboard/core/SwitchboardError"
import { Transport } from "@switchboard/core/Transport"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** What failed, as `AiError`s name it. */
export interface Site {
  readonly module: string
  readonly method: string
}

/** Where a call goes, and the redaction of everything quoted from a reply (core's `Transport.redact`). */
export interface Endpoint {
  readonly url: string
  readonly redact: (text: string) => string
}

/** The endpoint of `path` under the `Transport` in context; without one, the path and no redaction (nothing to redact). */
export const endpoint = (path: string): Effect.Effect<Endpoint> =>
  Effect.map(Effect.serviceOption(Transport), Option.match({
    onNone: () => ({ url: path, redact: (text: string) => text }),
    onSome: (transport) => ({ url: `${transport.config.apiUrl}${path}`, redact: transport.redact })
  }))

const describe = (error: SwitchboardError): string => {
  const status = "status" in error && error.status !== undefined ? ` (${error.status})` : ""
  return `${error._tag}${status}: ${error.message}`
}

/** The status of an error that answers one: the status classes, and a 408 (`TimeoutError` of phase `service`). */
const statusOf = (error: SwitchboardError): number | undefined => {
  switch (error._tag) {
    case "BadRequestError":
    case "AuthenticationError":
    case "PermissionDeniedError":
    case "NotFoundError":
    case "ConflictError":
    case "RateLimitError":
    case "ClientError":
    case "ServerError":
      return error.status
    case "TimeoutError":
      return error.phase === "service" ? 408 : undefined
    default:
      return undefined
  }
}

/** The service's error as its body said it (fields core read from it, already redacted and bounded). */
const bodyOf = (error: SwitchboardError): string => {
  const { code, message, param, type } = error as { message: string; type?: string; code?: string; param?: string }
  return JSON.stringify({ error: { message, type, code, param } })
}

const request = (url: string) => ({ method: "POST" as const, url, urlParams: [], hash: Option.none(), headers: {} })

/**
 * `HttpResponseError` has no `cause` field in `@effect/ai` 0.37: the
 * Switchboard error is set as the standard `Error.cause` (own, not
 * enumerable, as `new Error(message, { cause })` sets it).
 */
const withCause = <A extends Error>(error: A, cause: SwitchboardError): A =>
  Object.defineProperty(error, "cause", { value: cause, writable: true, configurable: true, enumerable: false })

/**
 * A status → `HttpResponseError` (`StatusCode`, the status, the service's
 * message); a failed connection or a time limit → `HttpRequestError`
 * (`Transport`); `InvalidRequestError` and `ConfigurationError` (nothing was
 * sent) → `MalformedInput`; a reply that is not what the protocol says →
 * `MalformedOutput`; the rest (a broken stream, a reply past its limit) →
 * `UnknownError`.
 */
export const toAiError = (site: Site, endpoint: Endpoint) => (error: SwitchboardError): AiError.AiError => {
  const description = describe(error)
  const status = statusOf(error)
  if (status !== undefined) {
    const requestId = "requestId" in error ? error.requestId : undefined
    return withCause(
      new AiError.HttpResponseError({
        ...site,
        reason: "StatusCode",
        request: request(endpoint.url),
        response: { status, headers: requestId === undefined ? {} : { "x-request-id": requestId } },
        body: bodyOf(error),
        description
      }),
      error
    )
  }
  const fields = { ...site, description, cause: error }
  switch (error._tag) {
    case "TransportError":
    case "TimeoutError":
      return new AiError.HttpRequestError({ ...fields, reason: "Transport", request: request(endpoint.url) })
    case "InvalidRequestError":
    case "ConfigurationError":
      return new AiError.MalformedInput(fields)
    case "ResponseDecodeError":
      return new AiError.MalformedOutput(fields)
    default:
      return new AiError.UnknownError(fields)
  }
}

/** `MalformedOutput` for a model's text that is unusable: why, then its start, redacted. */
export const malformedOutput = (site: Site, endpoint: Endpoint, what: string, why: string, text: string) =>
  new AiError.MalformedOutput({ ...site, description: endpoint.redact(`${what} ${why}: ${truncate(text)}`) })
