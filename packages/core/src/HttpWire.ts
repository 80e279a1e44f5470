/**
 * What `Transport` stands on: one HTTP exchange, bytes in and bytes out, with
 * no policy. Retries, status errors, decoding and spans stay in `Transport`;
 * a wire only sends, reads and reports how it failed.
 *
 * Three wires exist: `HttpClientWire`, over any `effect/http` `HttpClient`
 * (fetch, a client of the user's choice, a test's scripted one),
 * `NodeHttpWire` in `@switchboard/node`, straight over undici, which keeps a
 * call's overhead near the floor (`docs/performance.md`), and
 * `BrowserHttpWire` in `@switchboard/browser`. This module loads no
 * `effect/http`: a Node program would pay for a client it does not use.
 *
 * No wire follows a redirect: a 3xx is handed on as a reply (a browser's
 * opaque one, whose status is hidden, as a `redirect` failure), which
 * `Transport` makes a `ClientError`.
 *
 * What every wire shares, so the three behave alike:
 * - `traced(request)`: the W3C `traceparent` of the current span, sent on
 *   every request (each wire calls it before it sends);
 * - `@switchboard/core/WireLimits`: the time and size limits of `Limits`
 *   (first-byte, idle, total and request timeouts, `maxBytes` counted
 *   decoded, the `content-length` check, error bodies cut at
 *   `maxErrorBytes`), written once;
 * - `@switchboard/core/internal/decoding`: `content-encoding`, one rule for
 *   a list (`codingsOf`), and what fetch leaves coded (`leftByFetch`);
 * - `@switchboard/test-support/WireConformance`: the suite every wire passes.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { joinBytes } from "./internal/bytes.js"

/**
 * Every method a request may use.
 *
 * @since 0.1.0
 * @category models
 */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS"

/**
 * A request body: JSON text. Each wire sends it with its `content-type`
 * (`encode`).
 *
 * @since 0.1.0
 * @category models
 */
export type Body = { readonly _tag: "Json"; readonly text: string }

/**
 * A JSON body from its text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const json = (text: string): Body => ({ _tag: "Json", text })

/**
 * One HTTP request as a wire sends it: method, address, headers and body.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly method: Method
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: Body | undefined
}

/**
 * Status and headers (names in lower case, repeated values joined by `, `).
 *
 * @since 0.1.0
 * @category models
 */
export interface Head {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
}

/**
 * A whole response, its body read as UTF-8 text.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextResponse extends Head {
  readonly text: string
}

/**
 * A response whose body is still arriving.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenResponse extends Head {
  readonly body: Stream.Stream<Uint8Array, WireError>
  /**
   * Tells the wire the caller has what it waited for (a stream's first
   * element): the `firstByteMillis` limit stops.
   */
  readonly commit: () => void
  /**
   * Tells the wire the caller has read all it needs of the body (a chat
   * stream's `[DONE]`), so what is left is only the body's end: when the
   * exchange's scope closes, a wire may read and drop a short rest to keep
   * the connection for the next request, rather than close it. Without a
   * call (or on a wire without it), closing the scope closes the connection.
   *
   * @since 1.1.0
   */
  readonly done?: (() => void) | undefined
}

/**
 * How an exchange failed:
 * - `request`: before any response arrived (the cause tells whether the
 *   request left, e.g. `ECONNREFUSED`);
 * - `response`: the connection was lost while the body was read;
 * - `timeout`: a time limit the caller gave ran out; `limit` says which;
 * - `too-large`: a successful response's body is (or says it is) longer
 *   than `Limits.maxBytes`, counted decoded; the exchange was aborted;
 * - `decode`: the body's `content-encoding` is one the wire does not take,
 *   or its bytes do not decode (the cause says which);
 * - `redirect`: the reply was a redirect the wire cannot hand on as a status:
 *   a browser's fetch hides it (an opaque redirect: no status, no location),
 *   or a client of the user's choice followed one. A wire never follows a
 *   redirect itself; one it sees is a reply with its 3xx status.
 *
 * @since 0.1.0
 * @category errors
 */
export class WireError extends Data.TaggedError("WireError")<{
  readonly reason: "request" | "response" | "timeout" | "too-large" | "decode" | "redirect"
  readonly limit?: "request" | "first-byte" | "idle" | "total" | undefined
  /** `redirect`: the status and where it pointed, when the runtime lets the wire see them. */
  readonly status?: number | undefined
  readonly location?: string | undefined
  readonly cause?: unknown
}> {}

/**
 * The wire error for a time limit that passed: which one it was.
 *
 * @since 0.1.0
 * @category constructors
 */
export const timeout = (limit: "request" | "first-byte" | "idle" | "total"): WireError =>
  new WireError({ reason: "timeout", limit })

/**
 * The `redirect` failure: `status` and `location` where known.
 *
 * @since 1.1.0
 * @category constructors
 */
export const redirected = (status: number | undefined, location: string | undefined): WireError =>
  new WireError({ reason: "redirect", status, location: location === undefined ? undefined : withoutSecrets(location) })

// As `URL` in SwitchboardConfig: present everywhere the SDK runs, untyped in core's build.
declare const URL: new(url: string) => { readonly origin: string; readonly pathname: string }

/** A URL as errors may show it: no credentials, query or fragment (where tokens go). */
const withoutSecrets = (location: string): string => {
  try {
    const url = new URL(location)
    return url.origin === "null" ? "(a URL)" : url.origin + url.pathname
  } catch {
    return location.replace(/[?#].*$/s, "")
  }
}

/**
 * Most bytes of an error body (a status outside 2xx) that are read: enough
 * for any message; the rest is never read and the exchange is aborted.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxErrorBytes = 64 * 1024

// As `URL` in SwitchboardConfig: present everywhere the SDK runs, untyped in core's build.
declare const TextDecoder: new() => { readonly decode: (bytes: Uint8Array) => string }

/**
 * What a wire sends for a body: its `content-type` and its text (sent as
 * UTF-8).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (body: Body): { readonly contentType: string; readonly payload: string } => ({
  contentType: "application/json",
  payload: body.text
})

/**
 * The request's headers with the body's `content-type` (unless the caller set
 * one), and the payload to send.
 *
 * @since 0.1.0
 * @category encoding
 */
export const outgoing = (
  request: Request
): { readonly headers: Readonly<Record<string, string>>; readonly payload: string | undefined } => {
  if (request.body === undefined) return { headers: request.headers, payload: undefined }
  const { contentType, payload } = encode(request.body)
  return {
    headers: "content-type" in request.headers ?
      request.headers :
      Object.assign({}, request.headers, { "content-type": contentType }),
    payload
  }
}

/**
 * The W3C `traceparent` header naming `span` as the parent of what the
 * service does.
 *
 * @since 0.2.0
 * @category tracing
 */
export const traceparent = (span: Tracer.AnySpan): string =>
  `00-${span.traceId.padStart(32, "0")}-${span.spanId}-${span.sampled ? "01" : "00"}`

/**
 * The request with the `traceparent` of the fiber's current span (the call's
 * span under `Transport`), unless there is none, propagation is disabled
 * (`Tracer.DisablePropagation`) or the caller set one. Every wire sends its
 * requests through this, so each one propagates the trace the same way.
 *
 * @since 0.2.0
 * @category tracing
 */
export const traced = (request: Request): Effect.Effect<Request> =>
  Effect.withFiber((fiber) => {
    const span = Context.getOption(fiber.context, Tracer.ParentSpan)
    if (Option.isNone(span) || fiber.getRef(Tracer.DisablePropagation) || "traceparent" in request.headers) {
      return Effect.succeed(request)
    }
    return Effect.succeed({ ...request, headers: { ...request.headers, traceparent: traceparent(span.value) } })
  })

/**
 * The first `maxBytes` bytes of a body as UTF-8 text; what comes after is
 * never read (closing the exchange's scope aborts it).
 *
 * @since 0.1.0
 * @category combinators
 */
export const readText = <E>(body: Stream.Stream<Uint8Array, E>, maxBytes: number): Effect.Effect<string, E> =>
  Effect.map(readUpTo(body, maxBytes), ({ text }) => text)

/**
 * `readText`, and how many bytes were read (past `maxBytes` when the body
 * is longer).
 *
 * @since 0.1.0
 * @category combinators
 */
export const readUpTo = <E>(
  body: Stream.Stream<Uint8Array, E>,
  maxBytes: number
): Effect.Effect<{ readonly size: number; readonly text: string }, E> =>
  Effect.suspend(() => {
    const parts: Array<Uint8Array> = []
    let size = 0
    // `takeUntil` keeps the part that crosses the limit: `size` then says the body is longer.
    const read = Stream.takeUntil(body, (part) => {
      parts.push(part)
      size += part.length
      return size > maxBytes
    })
    return Effect.map(
      Stream.runDrain(read),
      () => ({ size, text: new TextDecoder().decode(joinBytes(parts, Math.min(size, maxBytes))) })
    )
  })

/**
 * The time and size limits of one exchange. `Transport` always hands its
 * limits to the wire, which keeps them as suits it: plain timers (the Node
 * and browser wires) or `Effect.timeout` (`HttpClientWire`, which a
 * `TestClock` drives). A limit that runs out fails with a `timeout`
 * `WireError` naming it and aborts the exchange.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** `text`: the whole exchange, from sending to the last byte (`limit: "request"`). */
  readonly timeoutMillis?: number | undefined
  /**
   * `text`: most bytes of a 2xx body, decoded (after `content-encoding`); a
   * longer one (or an uncoded one whose `content-length` says so) fails with
   * `too-large`. Any other status's body is cut at `maxErrorBytes` (decoded)
   * instead. Default: no limit.
   */
  readonly maxBytes?: number | undefined
  /**
   * `open`: the longest silence while the body's reader waits, after its
   * first read (`limit: "idle"`). A reader that is slow itself never trips it.
   */
  readonly idleMillis?: number | undefined
  /** `open`: the whole exchange, from sending to the body's end (`limit: "total"`). */
  readonly totalMillis?: number | undefined
  /** `open`: from sending until the caller calls `OpenResponse.commit` (`limit: "first-byte"`). */
  readonly firstByteMillis?: number | undefined
}

/**
 * Sends HTTP requests: the one place a platform's HTTP client plugs in
 * (Node, fetch, the browser).
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Sends the request and reads the whole body. `onHead`, when given, is
   * called once as the status and headers arrive, before the body is read
   * (not at all when no head comes): `Transport` times a call's first byte
   * by it (`ResponseMetadata`'s `timings.firstByte`).
   */
  readonly text: (request: Request, limits?: Limits, onHead?: (() => void) | undefined) => Effect.Effect<TextResponse, WireError>
  /**
   * Sends the request and succeeds once the status and headers arrive. The
   * body is read as it comes; closing the scope aborts the exchange.
   */
  readonly open: (request: Request, limits?: Limits) => Effect.Effect<OpenResponse, WireError, Scope.Scope>
}

/**
 * The service that sends HTTP requests (see `Service`): Node's, `fetch`'s or
 * the browser's.
 *
 * @since 0.1.0
 * @category tags
 */
export class HttpWire extends Context.Service<HttpWire, Service>()("@switchboard/core/HttpWire") {}

/**
 * Fails `body` with a `timeout` `WireError` when a read after the first takes
 * longer than `millis`: the first read is the caller's to time (a stream's
 * first-byte limit), the silences after it are this one's.
 *
 * @since 0.1.0
 * @category combinators
 */
export const timeoutBetweenReads = <A>(
  body: Stream.Stream<A, WireError>,
  millis: number
): Stream.Stream<A, WireError> =>
  Stream.scoped(Stream.fromPull(Effect.map(Stream.toPull(body), (pull) => {
    let started = false
    const timed = Effect.timeoutOrElse(pull, { duration: millis, orElse: () => Effect.fail(timeout("idle")) })
    return Effect.suspend(() => {
      if (started) return timed
      started = true
      return pull
    })
  })))
