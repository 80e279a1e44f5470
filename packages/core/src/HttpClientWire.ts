/**
 * An `HttpWire` over any `@effect/platform` `HttpClient`: the browser's
 * fetch, a client of the user's choice, a test's scripted one. Its own
 * module, so that Node programs, which use `NodeHttpWire`, never load
 * `@effect/platform`'s client.
 *
 * @since 0.1.0
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpWire from "./HttpWire.js"
import * as Decoding from "./internal/decoding.js"

declare const globalThis: { readonly Response?: abstract new(...args: ReadonlyArray<never>) => unknown }

interface Wrapped {
  readonly original?: Wrapped
  readonly source?: unknown
}

/**
 * Whether the client decoded the body itself: fetch does, and keeps
 * `content-encoding` in the headers; the Node clients hand on the coded
 * bytes. No public field says which: the platform's responses keep what they
 * were made from as `source` (a web `Response` for fetch), under the
 * `original` of each response a client wraps (@effect/platform 0.97).
 */
const decodedByClient = (response: HttpClientResponse.HttpClientResponse): boolean => {
  let inner = response as Wrapped
  while (inner.original !== undefined) inner = inner.original
  return globalThis.Response !== undefined && inner.source instanceof globalThis.Response
}

/**
 * The response's codings when the wire must undo them (`undefined`: the body
 * is plain, or the client decoded it), or why it cannot.
 */
const codingsOf = (response: HttpClientResponse.HttpClientResponse) => {
  const codings = Decoding.codingsOf(response.headers["content-encoding"])
  return codings === undefined || codings instanceof HttpWire.WireError || !decodedByClient(response) ? codings : undefined
}

/**
 * A wire over the platform's `HttpClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (httpClient: HttpClient.HttpClient): HttpWire.Service => {
  // `Transport`'s span carries method, path, model and status; the client's
  // own span would repeat it per attempt.
  const client = HttpClient.withTracerDisabledWhen(httpClient, () => true)
  const execute = (request: HttpWire.Request) => {
    const outgoing = HttpWire.outgoing(request)
    const headers = Decoding.acceptEncoding(outgoing.headers)
    const payload = outgoing.payload
    const contentType = headers["content-type"]
    const body = payload === undefined ? undefined : typeof payload === "string" ?
      HttpBody.text(payload, contentType) :
      HttpBody.uint8Array(payload, contentType)
    return Effect.mapError(
      client.execute(HttpClientRequest.make(request.method)(request.url, { headers, ...(body === undefined ? {} : { body }) })),
      (cause: HttpClientError.HttpClientError) => new HttpWire.WireError({ reason: "request", cause: cause.cause ?? cause })
    )
  }
  const lost = (cause: HttpClientError.HttpClientError) => Decoding.readFailure(cause.cause ?? cause)
  /** The body, decoded: by the client, or here through `node:zlib` where the runtime has it. */
  const bodyOf = (
    response: HttpClientResponse.HttpClientResponse,
    codings: ReadonlyArray<Decoding.Coding> | HttpWire.WireError
  ): Stream.Stream<Uint8Array, HttpWire.WireError> => {
    if (codings instanceof HttpWire.WireError) return Stream.fail(codings)
    const zlib = Decoding.builtinZlib()
    if (zlib === undefined) return Stream.fail(Decoding.failure(`this runtime has no node:zlib to decode ${codings.join(", ")}`))
    return Decoding.decodeStream(zlib, codings, Stream.mapError(response.stream, lost))
  }
  return {
    text: (request, limits) => {
      const exchange = Effect.scoped(Effect.flatMap(execute(request), (response) => {
        const success = response.status >= 200 && response.status < 300
        const max = success ? limits?.maxBytes : HttpWire.maxErrorBytes
        const tooLarge = Effect.fail(new HttpWire.WireError({ reason: "too-large" }))
        const codings = codingsOf(response)
        if (codings !== undefined) {
          const read = HttpWire.readUpTo(bodyOf(response, codings), max ?? Infinity)
          return Effect.flatMap(
            // An error body that does not decode keeps its status, with no text.
            success ? read : Effect.catchIf(read, (error) => error.reason === "decode", () => Effect.succeed({ size: 0, text: "" })),
            ({ size, text }): Effect.Effect<HttpWire.TextResponse, HttpWire.WireError> =>
              success && max !== undefined && size > max ?
                tooLarge :
                Effect.succeed({ status: response.status, headers: response.headers, text })
          )
        }
        // A coded body's length is its coded size: only a plain one's says what the limit counts.
        const plain = response.headers["content-encoding"] === undefined
        if (success && max !== undefined && plain && Number(response.headers["content-length"]) > max) return tooLarge
        const read = max === undefined ?
          Effect.map(Effect.mapError(response.text, lost), (text) => ({ text, size: 0 })) :
          HttpWire.readUpTo(Stream.mapError(response.stream, lost), max)
        return Effect.flatMap(read, ({ size, text }): Effect.Effect<HttpWire.TextResponse, HttpWire.WireError> =>
          success && max !== undefined && size > max ?
            tooLarge :
            Effect.succeed({ status: response.status, headers: response.headers, text }))
      }))
      return limits?.timeoutMillis === undefined ? exchange : Effect.timeoutFail(exchange, {
        duration: limits.timeoutMillis,
        onTimeout: () => HttpWire.timeout("request")
      })
    },
    // The limits with `Effect.timeout`, so that a `TestClock` drives them:
    // the wait for the head, then each read, within what is left of the
    // total and, until `commit`, of the first-byte limit.
    open: (request, limits) =>
      Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (start) => {
        let committed = false
        const deadline = (): { readonly at: number; readonly limit: "first-byte" | "total" } | undefined => {
          const total = limits?.totalMillis === undefined ? undefined : start + limits.totalMillis
          const first = committed || limits?.firstByteMillis === undefined ? undefined : start + limits.firstByteMillis
          if (first !== undefined && (total === undefined || first <= total)) return { at: first, limit: "first-byte" }
          return total === undefined ? undefined : { at: total, limit: "total" }
        }
        const within = <A>(effect: Effect.Effect<A, Option.Option<HttpWire.WireError>>) =>
          Effect.suspend(() => {
            const due = deadline()
            return due === undefined ? effect : Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
              Effect.timeoutFail(effect, {
                duration: Math.max(0, due.at - now),
                onTimeout: () => Option.some(HttpWire.timeout(due.limit))
              }))
          })
        return Effect.map(
          Effect.mapError(within(Effect.mapError(execute(request), Option.some)), (error) =>
            Option.getOrElse(error, () => HttpWire.timeout("total"))),
          (response): HttpWire.OpenResponse => {
            const codings = codingsOf(response)
            const body = codings === undefined ? Stream.mapError(response.stream, lost) : bodyOf(response, codings)
            const idle = limits?.idleMillis === undefined ? body : HttpWire.timeoutBetweenReads(body, limits.idleMillis)
            return {
              status: response.status,
              headers: response.headers,
              body: limits?.totalMillis === undefined && limits?.firstByteMillis === undefined ? idle : Stream.unwrapScoped(
                Effect.map(Stream.toPull(idle), (pull) => Stream.repeatEffectChunkOption(within(pull)))
              ),
              commit: () => {
                committed = true
              }
            }
          }
        )
      })
  }
}

/**
 * The wire over whatever `HttpClient` is provided.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HttpWire.HttpWire, never, HttpClient.HttpClient> = Layer.effect(
  HttpWire.HttpWire,
  Effect.map(HttpClient.HttpClient, make)
)
