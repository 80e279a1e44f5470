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
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly method: "GET" | "POST"
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** JSON text; sent with `content-type: application/json`. */
  readonly body?: string | undefined
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
}

/**
 * How an exchange failed:
 * - `request`: before any response arrived (the cause tells whether the
 *   request left, e.g. `ECONNREFUSED`);
 * - `response`: the connection was lost while the body was read;
 * - `timeout`: the time limit the caller gave ran out;
 * - `too-large`: a successful response's body is (or says it is) longer
 *   than `Limits.maxBytes`; the exchange was aborted.
 *
 * @since 0.1.0
 * @category errors
 */
export class WireError extends Data.TaggedError("WireError")<{
  readonly reason: "request" | "response" | "timeout" | "too-large"
  readonly cause?: unknown
}> {}

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
 * Time limits measured on the wall clock. `Transport` hands them to the wire
 * only under the default clock (a plain timer is far cheaper than racing a
 * fiber); under a `TestClock` it applies them itself with `Effect.timeout`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** `text`: the whole exchange, from sending to the last byte. */
  readonly timeoutMillis?: number | undefined
  /**
   * `text`: most bytes of a 2xx body; a longer one (or one whose
   * `content-length` says so) fails with `too-large`. Any other status's
   * body is cut at `maxErrorBytes` instead. Default: no limit.
   */
  readonly maxBytes?: number | undefined
  /** `open`: the longest silence between two reads of the body, after the first (`timeoutBetweenReads`). */
  readonly idleMillis?: number | undefined
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
      onTimeout: () => Option.some(new WireError({ reason: "timeout" }))
    })
    return Stream.repeatEffectChunkOption(Effect.suspend(() => {
      if (started) return timed
      started = true
      return pull
    }))
  }))
