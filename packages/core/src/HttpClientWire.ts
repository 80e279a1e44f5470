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
import * as HttpWire from "./HttpWire.js"

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
    const { headers, payload } = HttpWire.outgoing(request)
    const contentType = headers["content-type"]
    const body = payload === undefined ? undefined : typeof payload === "string" ?
      HttpBody.text(payload, contentType) :
      HttpBody.uint8Array(payload, contentType)
    return Effect.mapError(
      client.execute(HttpClientRequest.make(request.method)(request.url, { headers, ...(body === undefined ? {} : { body }) })),
      (cause: HttpClientError.HttpClientError) => new HttpWire.WireError({ reason: "request", cause: cause.cause ?? cause })
    )
  }
  const lost = (cause: HttpClientError.HttpClientError) => new HttpWire.WireError({ reason: "response", cause: cause.cause ?? cause })
  return {
    text: (request, limits) => {
      const exchange = Effect.scoped(Effect.flatMap(execute(request), (response) => {
        const success = response.status >= 200 && response.status < 300
        const max = success ? limits?.maxBytes : HttpWire.maxErrorBytes
        const tooLarge = Effect.fail(new HttpWire.WireError({ reason: "too-large" }))
        if (success && max !== undefined && Number(response.headers["content-length"]) > max) return tooLarge
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
            const body = Stream.mapError(response.stream, lost)
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
