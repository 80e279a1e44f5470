/**
 * What `Transport` stands on: one HTTP exchange, bytes in and bytes out, with
 * no policy. Retries, status errors, decoding and spans stay in `Transport`;
 * a wire only sends, reads and reports how it failed.
 *
 * Two wires exist: `HttpClientWire`, over any `@effect/platform` `HttpClient`
 * (the browser's fetch, a test's scripted client), and `NodeHttpWire` in
 * `@switchboard/node`, straight over undici, which keeps a call's overhead
 * near the floor (`docs/performance.md`). This module loads no
 * `@effect/platform`: on Node its `HttpClient` would cost every program
 * about 25 ms at start for a wire it does not use.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/**
 * Every method a request may use.
 *
 * @since 0.1.0
 * @category models
 */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS"

/**
 * One part of a `multipart/form-data` body: a field, or a file.
 *
 * @since 0.1.0
 * @category models
 */
export type FormPart =
  | { readonly name: string; readonly value: string }
  | { readonly name: string; readonly bytes: Uint8Array; readonly filename: string; readonly contentType: string }

/**
 * A request body: JSON text, bytes of a given type, or form data. Each wire
 * sends it with its `content-type` (`encode`).
 *
 * @since 0.1.0
 * @category models
 */
export type Body =
  | { readonly _tag: "Json"; readonly text: string }
  | { readonly _tag: "Bytes"; readonly bytes: Uint8Array; readonly contentType: string }
  | { readonly _tag: "FormData"; readonly parts: ReadonlyArray<FormPart> }

/**
 * @since 0.1.0
 * @category constructors
 */
export const json = (text: string): Body => ({ _tag: "Json", text })

/**
 * @since 0.1.0
 * @category constructors
 */
export const bytes = (bytes: Uint8Array, contentType: string): Body => ({ _tag: "Bytes", bytes, contentType })

/**
 * @since 0.1.0
 * @category constructors
 */
export const formData = (parts: ReadonlyArray<FormPart>): Body => ({ _tag: "FormData", parts })

/**
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
 *   or its bytes do not decode (the cause says which).
 *
 * @since 0.1.0
 * @category errors
 */
export class WireError extends Data.TaggedError("WireError")<{
  readonly reason: "request" | "response" | "timeout" | "too-large" | "decode"
  readonly limit?: "request" | "first-byte" | "idle" | "total" | undefined
  readonly cause?: unknown
}> {}

/**
 * @since 0.1.0
 * @category constructors
 */
export const timeout = (limit: "request" | "first-byte" | "idle" | "total"): WireError =>
  new WireError({ reason: "timeout", limit })

/**
 * Most bytes of an error body (a status outside 2xx) that are read: enough
 * for any message; the rest is never read and the exchange is aborted.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxErrorBytes = 64 * 1024

// As `URL` in SwitchboardConfig: present everywhere the SDK runs, untyped in core's build.
declare const TextDecoder: new () => { readonly decode: (bytes: Uint8Array) => string }
declare const TextEncoder: new () => { readonly encode: (text: string) => Uint8Array }

/** A boundary no part holds: random, and checked. */
const boundaryFor = (parts: ReadonlyArray<Uint8Array>): string => {
  for (;;) {
    const boundary = `----switchboard${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`
    const text = new TextDecoder().decode(joinBytes(parts, parts.reduce((n, p) => n + p.length, 0)))
    if (!text.includes(boundary)) return boundary
  }
}

// A quote, CR or LF in a name would end the header line.
const quoted = (text: string) => `"${text.replace(/["\r\n]/g, (c) => encodeURIComponent(c))}"`

const multipart = (parts: ReadonlyArray<FormPart>): { readonly contentType: string; readonly payload: Uint8Array } => {
  const utf8 = new TextEncoder()
  const contents = parts.map((part) => ("value" in part ? utf8.encode(part.value) : part.bytes))
  const boundary = boundaryFor(contents)
  const pieces: Array<Uint8Array> = []
  parts.forEach((part, i) => {
    const disposition = `form-data; name=${quoted(part.name)}` + ("value" in part ? "" : `; filename=${quoted(part.filename)}`)
    const type = "value" in part ? "" : `content-type: ${part.contentType.replace(/[\r\n]/g, "")}\r\n`
    pieces.push(utf8.encode(`--${boundary}\r\ncontent-disposition: ${disposition}\r\n${type}\r\n`), contents[i]!, utf8.encode("\r\n"))
  })
  pieces.push(utf8.encode(`--${boundary}--\r\n`))
  const size = pieces.reduce((n, p) => n + p.length, 0)
  return { contentType: `multipart/form-data; boundary=${boundary}`, payload: joinBytes(pieces, size) }
}

/**
 * What a wire sends for a body: its `content-type` and its bytes (or text,
 * sent as UTF-8).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (body: Body): { readonly contentType: string; readonly payload: string | Uint8Array } => {
  switch (body._tag) {
    case "Json":
      return { contentType: "application/json", payload: body.text }
    case "Bytes":
      return { contentType: body.contentType, payload: body.bytes }
    case "FormData":
      return multipart(body.parts)
  }
}

/**
 * The request's headers with the body's `content-type` (unless the caller set
 * one), and the payload to send.
 *
 * @since 0.1.0
 * @category encoding
 */
export const outgoing = (
  request: Request
): { readonly headers: Readonly<Record<string, string>>; readonly payload: string | Uint8Array | undefined } => {
  if (request.body === undefined) return { headers: request.headers, payload: undefined }
  const { contentType, payload } = encode(request.body)
  return { headers: "content-type" in request.headers ? request.headers : Object.assign({}, request.headers, { "content-type": contentType }), payload }
}

const joinBytes = (parts: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (parts.length === 1) return parts[0]!.subarray(0, size)
  const out = new Uint8Array(size)
  let offset = 0
  for (const part of parts) {
    if (offset >= size) break
    const piece = part.subarray(0, size - offset)
    out.set(piece, offset)
    offset += piece.length
  }
  return out
}

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
export const readUpTo = <E>(body: Stream.Stream<Uint8Array, E>, maxBytes: number) =>
  Effect.map(
    Stream.runFoldWhile(
      body,
      { parts: [] as Array<Uint8Array>, size: 0 },
      (state) => state.size <= maxBytes,
      (state, part) => {
        state.parts.push(part)
        return { parts: state.parts, size: state.size + part.length }
      }
    ),
    ({ parts, size }) => ({ size, text: new TextDecoder().decode(joinBytes(parts, Math.min(size, maxBytes))) })
  )

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
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Sends the request and reads the whole body. */
  readonly text: (request: Request, limits?: Limits) => Effect.Effect<TextResponse, WireError>
  /**
   * Sends the request and succeeds once the status and headers arrive. The
   * body is read as it comes; closing the scope aborts the exchange.
   */
  readonly open: (request: Request, limits?: Limits) => Effect.Effect<OpenResponse, WireError, Scope.Scope>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class HttpWire extends Context.Tag("@switchboard/core/HttpWire")<HttpWire, Service>() {}

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
  Stream.unwrapScoped(Effect.map(Stream.toPull(body), (pull) => {
    let started = false
    const timed = Effect.timeoutFail(pull, {
      duration: millis,
      onTimeout: () => Option.some(timeout("idle"))
    })
    return Stream.repeatEffectChunkOption(Effect.suspend(() => {
      if (started) return timed
      started = true
      return pull
    }))
  }))
