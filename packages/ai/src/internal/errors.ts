/**
 * Switchboard's typed errors → `AiError`s whose `reason` is what the failure
 * means to `effect/ai` (rate limit, authentication, invalid request, server,
 * network, bad output, …), so `isRetryable` and `retryAfter` answer right.
 * The Switchboard error rides along: as `cause` of a `NetworkError`, as the
 * standard `Error.cause` of the other reasons, and its fields as JSON in
 * `metadata.switchboard`.
 *
 * @internal
 */
import { truncate } from "@switchboard/core/internal/text"
import type { SwitchboardError } from "@switchboard/core/SwitchboardError"
import { Transport } from "@switchboard/core/Transport"
import * as AiError from "effect/ai/AiError"
import * as Duration from "effect/Duration"
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

type Fields = {
  readonly message: string
  readonly status?: number | undefined
  readonly requestId?: string | undefined
  readonly type?: string | undefined
  readonly code?: string | undefined
  readonly param?: string | undefined
  readonly field?: string | undefined
  readonly retryAfterMillis?: number | undefined
  readonly phase?: string | undefined
  readonly reason?: string | undefined
  readonly limit?: number | undefined
  readonly shouldRetry?: boolean | undefined
}

/** The error's fields that are JSON and say what happened (all already redacted and bounded by core). */
const metadataOf = (error: SwitchboardError, url: string): AiError.ProviderMetadata => {
  const { code, field, limit, message, param, phase, reason, requestId, retryAfterMillis, shouldRetry, status, type } = error as Fields
  const fields: Record<string, string | number | boolean> = { error: error._tag, message, method: "POST", url }
  const optional = { status, requestId, type, code, param, field, retryAfterMillis, shouldRetry, phase, reason, limit }
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) fields[key] = value
  }
  return { switchboard: fields }
}

/** The service's answer as `effect/ai` keeps it: the status, the request id, the error body core read. */
const httpOf = (error: SwitchboardError, status: number): typeof AiError.HttpContext.Type => {
  const { code, message, param, requestId, type } = error as Fields
  return {
    response: { status, headers: requestId === undefined ? {} : { "x-request-id": requestId } },
    body: JSON.stringify({ error: { message, type, code, param } })
  }
}

/** The `Error.cause` of a reason, own and not enumerable as `new Error(message, { cause })` sets it. */
const withCause = <A extends object>(reason: A, cause: SwitchboardError): A =>
  Object.defineProperty(reason, "cause", { value: cause, writable: true, configurable: true, enumerable: false })

/**
 * A status the service answered → the reason `effect/ai`'s providers give
 * it, as far as the status goes (`agreeing` then makes its retryability the
 * error's own).
 */
const statusReason = (error: StatusError, status: number, url: string): AiError.AiErrorReason => {
  const { code, message, param, retryAfterMillis, type } = error as Fields
  const common = { metadata: metadataOf(error, url), http: httpOf(error, status) }
  const description = `${error._tag} (${status}): ${message}`
  const invalid = () => new AiError.InvalidRequestError({ ...(param === undefined ? {} : { parameter: param }), description, ...common })
  switch (error._tag) {
    case "AuthenticationError":
      return new AiError.AuthenticationError({ kind: "InvalidKey", description, ...common })
    case "PermissionDeniedError":
      return new AiError.AuthenticationError({ kind: "InsufficientPermissions", description, ...common })
    case "RateLimitError":
      return code === "insufficient_quota" || type === "insufficient_quota" || !error.isRetryable
        ? new AiError.QuotaExhaustedError(common)
        : new AiError.RateLimitError({
          ...(retryAfterMillis === undefined ? {} : { retryAfter: Duration.millis(retryAfterMillis) }),
          ...common
        })
    case "ServerError":
    case "ConflictError":
      return error.isRetryable ? new AiError.InternalProviderError({ description, ...common }) : invalid()
    case "BadRequestError":
    case "NotFoundError":
      return invalid()
    case "ClientError":
      return status === 422 ? invalid() : new AiError.UnknownError({ description, ...common })
  }
}

type StatusError = Extract<
  SwitchboardError,
  { readonly _tag: "BadRequestError" | "AuthenticationError" | "PermissionDeniedError" | "NotFoundError" | "ConflictError" | "RateLimitError" | "ClientError" | "ServerError" }
>

/**
 * `reason`, or one of the same failure whose `isRetryable` is the error's
 * (one answer: core's retry, this mapping and the CLI all read the error's
 * own `isRetryable`, `x-should-retry` included).
 */
const agreeing = (reason: AiError.AiErrorReason, error: SwitchboardError, url: string): AiError.AiErrorReason => {
  if (reason.isRetryable === error.isRetryable) return reason
  const description = `${error._tag}: ${error.message}`
  const metadata = metadataOf(error, url)
  return error.isRetryable
    ? new AiError.InternalProviderError({ description, metadata })
    : new AiError.UnknownError({ description, metadata })
}

/**
 * The reason of any Switchboard error. Exhaustive: a new error class is a
 * type error here until it is given its reason.
 */
const naturalReason = (error: SwitchboardError, url: string): AiError.AiErrorReason => {
  const description = `${error._tag}: ${error.message}`
  const metadata = metadataOf(error, url)
  switch (error._tag) {
    case "BadRequestError":
    case "AuthenticationError":
    case "PermissionDeniedError":
    case "NotFoundError":
    case "ConflictError":
    case "RateLimitError":
    case "ClientError":
    case "ServerError":
      return error.status === undefined
        ? new AiError.UnknownError({ description, metadata })
        : statusReason(error, error.status, url)
    // No answer in time (the service's own 408 too) or no connection: worth another try.
    case "TransportError":
    case "TimeoutError":
      return new AiError.NetworkError({ reason: "TransportError", method: "POST", url, description, cause: error })
    case "StreamError":
      return error.reason === "cut"
        ? new AiError.NetworkError({ reason: "TransportError", method: "POST", url, description, cause: error })
        : new AiError.InternalProviderError({ description, metadata })
    // Nothing was sent: the field is named.
    case "InvalidRequestError":
    case "ConfigurationError":
      return new AiError.InvalidRequestError({ parameter: error.field, description, metadata })
    case "ResponseDecodeError":
    case "ResponseTooLargeError":
    case "NoImageInResponseError":
      return new AiError.InvalidResponseError({ description, metadata })
    // Video tasks and their journal: no `effect/ai` call makes them; named as they are.
    case "TaskFailedError":
    case "TaskTimeoutError":
    case "TaskNotFoundError":
    case "JournalError":
      return new AiError.UnknownError({ description, metadata })
  }
}

const reasonOf = (error: SwitchboardError, url: string): AiError.AiErrorReason => agreeing(naturalReason(error, url), error, url)

/** A Switchboard error as the `AiError` of `site`; the original kept as the reason's cause. */
export const toAiError = (site: Site, endpoint: Endpoint) => (error: SwitchboardError): AiError.AiError => {
  const reason = reasonOf(error, endpoint.url)
  return AiError.make({ ...site, reason: reason._tag === "NetworkError" ? reason : withCause(reason, error) })
}

/** `InvalidOutputError` for a model's text that is unusable: why, then its start, redacted. */
export const invalidOutput = (site: Site, endpoint: Endpoint, what: string, why: string, text: string): AiError.AiError =>
  AiError.make({
    ...site,
    reason: new AiError.InvalidOutputError({ description: endpoint.redact(`${what} ${why}: ${truncate(endpoint.redact(text))}`) })
  })

/**
 * `effect/ai`'s `StructuredOutputError` for a value that does not match the
 * schema, as `generateObject` would fail, but with the reply's text
 * redacted and its first 4,000 characters kept (`effect/ai`'s holds it whole).
 */
export const outputMismatch = (site: Site, endpoint: Endpoint, why: string, text: string): AiError.AiError =>
  AiError.make({
    ...site,
    reason: new AiError.StructuredOutputError({
      description: truncate(endpoint.redact(why), 1000),
      responseText: truncate(endpoint.redact(text), 4000)
    })
  })

/** `InvalidRequestError` naming `parameter`, for input the provider cannot send (nothing was sent). */
export const invalidRequest = (site: Site, parameter: string, description: string): AiError.AiError =>
  AiError.make({ ...site, reason: new AiError.InvalidRequestError({ parameter, description }) })
