/**
 * CORS, so a web page on another origin (a dev server on localhost, the
 * browser package's tests) can call the emulator directly: preflights are
 * answered without a key, and every response to an allowed origin, streams
 * and errors included, names it in `Access-Control-Allow-Origin` and exposes
 * the headers a client reads (`x-request-id`, `retry-after`,
 * `retry-after-ms`, the `x-ratelimit-*` headers and `openai-processing-ms`).
 *
 * Origins are matched exactly, or by scheme and host with any port when the
 * pattern ends in `:*` (`http://localhost:*`); `*` allows every origin.
 *
 * @internal
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Errors from "./errors.js"

/**
 * @internal
 */
export interface Config {
  readonly enabled: boolean
  readonly allowedOrigins: ReadonlyArray<string> | "*"
}

/** Any page served from this machine, on any port. */
export const loopbackOrigins: ReadonlyArray<string> = [
  "http://127.0.0.1:*",
  "http://localhost:*",
  "http://[::1]:*",
  "https://127.0.0.1:*",
  "https://localhost:*",
  "https://[::1]:*"
]

export const defaultConfig: Config = { enabled: true, allowedOrigins: loopbackOrigins }

export const allowedMethods = "GET, POST, OPTIONS"
export const allowedHeaders = ["authorization", "content-type"] as const
export const exposedHeaders = [
  "x-request-id",
  "retry-after",
  "retry-after-ms",
  "x-ratelimit-limit-requests",
  "x-ratelimit-limit-tokens",
  "x-ratelimit-remaining-requests",
  "x-ratelimit-remaining-tokens",
  "x-ratelimit-reset-requests",
  "x-ratelimit-reset-tokens",
  "openai-processing-ms"
].join(", ")

/** `http://localhost:5173` → `http://localhost`, or `undefined` when it is not an origin. */
const schemeAndHost = (origin: string): string | undefined => {
  try {
    const url = new URL(origin)
    return url.origin === origin ? `${url.protocol}//${url.hostname}` : undefined
  } catch {
    return undefined
  }
}

export const isAllowed = (config: Config, origin: string): boolean => {
  if (!config.enabled) return false
  if (config.allowedOrigins === "*") return true
  return config.allowedOrigins.some((pattern) => {
    if (pattern === "*" || pattern === origin) return true
    if (!pattern.endsWith(":*")) return false
    const host = schemeAndHost(origin)
    return host !== undefined && host === pattern.slice(0, -2)
  })
}

const originHeaders = (origin: string) => ({
  "access-control-allow-origin": origin,
  vary: "origin"
})

/** The CORS headers of a response to `origin`; nothing when it has none or is not allowed. */
export const apply = (
  config: Config,
  origin: string | undefined,
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse =>
  origin === undefined || !isAllowed(config, origin)
    ? response
    : HttpServerResponse.setHeaders(response, {
      ...originHeaders(origin),
      "access-control-expose-headers": exposedHeaders
    })

/** `authorization, content-type`, plus whatever else the page asked for. */
const headersFor = (requested: string | undefined): string => {
  const extra = (requested ?? "").split(",").map((h) => h.trim().toLowerCase()).filter((h) => h !== "")
  return [...new Set([...allowedHeaders, ...extra])].join(", ")
}

/**
 * The answer to an `OPTIONS` request, before any key check or fault: 204
 * with the allowed methods and headers for an allowed origin, 403 with an
 * error body naming the origin otherwise.
 */
export const preflight = (
  config: Config,
  headers: Readonly<Record<string, string | undefined>>
): HttpServerResponse.HttpServerResponse => {
  const origin = headers["origin"]
  if (origin === undefined) return HttpServerResponse.empty({ status: 204, headers: { allow: allowedMethods } })
  if (!isAllowed(config, origin)) {
    return Errors.toResponse(
      new Errors.ApiError({
        status: 403,
        message: `The origin ${origin} is not allowed by the emulator's CORS settings (Options.cors.allowedOrigins).`,
        type: "invalid_request_error",
        param: null,
        code: "cors_origin_not_allowed"
      })
    )
  }
  return HttpServerResponse.empty({
    status: 204,
    headers: {
      ...originHeaders(origin),
      "access-control-allow-methods": allowedMethods,
      "access-control-allow-headers": headersFor(headers["access-control-request-headers"]),
      "access-control-max-age": "600",
      // Chrome's Private Network Access asks this of a public page calling loopback.
      ...(headers["access-control-request-private-network"] === "true"
        ? { "access-control-allow-private-network": "true" }
        : {}),
      allow: allowedMethods
    }
  })
}
