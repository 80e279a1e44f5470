/**
 * An `HttpWire` over any `effect/http` `HttpClient`: fetch
 * (`FetchHttpClient`), `@effect/platform-node`'s `NodeHttpClient`, a client
 * of the user's choice, a test's scripted one. Its own module, so that Node
 * programs, which use `NodeHttpWire`, never load `effect/http`'s client.
 *
 * The limits are `WireLimits`', on the fiber's clock (`clockTimers`): a
 * `TestClock` drives them.
 *
 * @since 0.1.0
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Pull from "effect/Pull"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as HttpWire from "./HttpWire.js"
import * as Decoding from "./internal/decoding.js"
import * as WireLimits from "./WireLimits.js"

/**
 * The response's codings when the wire must undo them (`undefined`: the
 * body is plain, or the client decoded it), or why it cannot. A fetch-backed
 * client decodes by itself, but only a list it takes whole
 * (`Decoding.leftByFetch`), and keeps `content-encoding` in the headers: its
 * responses are the ones `HttpClientResponse.toWeb` finds a web `Response`
 * under. Other clients hand on the coded bytes.
 */
const codingsOf = (response: HttpClientResponse.HttpClientResponse) => {
  const header = response.headers["content-encoding"]
  if (header === undefined) return undefined
  const byFetch = Option.isSome(HttpClientResponse.toWeb(response))
  return byFetch ? Decoding.leftByFetch(header) : Decoding.codingsOf(header)
}

/** A failed read: `decode` when zlib (in fetch, or here) found the coded bytes corrupt, else `response`. */
const lost = (cause: HttpClientError.HttpClientError) => Decoding.readFailure(cause.cause ?? cause)

/** The body, decoded: by the client, or here through `node:zlib` where the runtime has it. */
const bodyOf = (response: HttpClientResponse.HttpClientResponse): Stream.Stream<Uint8Array, HttpWire.WireError> => {
  const codings = codingsOf(response)
  const raw = Stream.mapError(response.stream, lost)
  if (codings === undefined) return raw
  if (codings instanceof HttpWire.WireError) return Stream.fail(codings)
  const zlib = Decoding.builtinZlib()
  if (zlib === undefined) return Stream.fail(Decoding.failure(`this runtime has no node:zlib to decode ${codings.join(", ")}`))
  return Decoding.decodeStream(zlib, codings, raw)
}

/** A whole body through `WireLimits.TextBody`: the reads stop at its verdict. */
const readText = (
  response: HttpClientResponse.HttpClientResponse,
  maxBytes: number | undefined
): Effect.Effect<HttpWire.TextResponse, HttpWire.WireError> => {
  const head = { status: response.status, headers: response.headers }
  const text = new WireLimits.TextBody(head, maxBytes)
  if (text.declaredTooLarge) return Effect.fail(WireLimits.tooLarge())
  let verdict: WireLimits.Verdict = "more"
  const read = Stream.runForEachWhile(bodyOf(response), (bytes) =>
    Effect.sync(() => {
      verdict = text.add(bytes)
      return verdict === "more"
    }))
  return Effect.matchEffect(read, {
    onFailure: (error) => {
      const failure = error.reason === "decode" ? text.undecodable(error) : error
      return failure === undefined ? Effect.succeed({ ...head, text: text.text() }) : Effect.fail(failure)
    },
    onSuccess: () => verdict === "too-large" ? Effect.fail(WireLimits.tooLarge()) : Effect.succeed({ ...head, text: text.text() })
  })
}

const noTracing = () => true

/**
 * fetch follows redirects unless told not to; a followed redirect hands the
 * request's headers (secret ones included) and body to whatever host it
 * names. With `manual`, Node's fetch hands on the 3xx with its location, a
 * browser's an opaque redirect (status 0, no location). Over the caller's
 * own fetch options, if any: only `redirect` is ours.
 */
const noRedirects = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.serviceOption(FetchHttpClient.RequestInit), (init) =>
    Effect.provideService(effect, FetchHttpClient.RequestInit, { ...Option.getOrUndefined(init), redirect: "manual" }))

/**
 * A redirect that came back as something else than its 3xx: a browser's
 * opaque redirect, or a fetch that followed one anyway (a `Fetch` of the
 * caller's choice). Other clients hand on the 3xx; one that follows by
 * itself (`HttpClient.followRedirects`) is the caller's choice (docs/errors-and-retries.md).
 */
const hiddenRedirect = (response: HttpClientResponse.HttpClientResponse): HttpWire.WireError | undefined => {
  const web = HttpClientResponse.toWeb(response)
  if (Option.isNone(web)) return undefined
  if (web.value.type === "opaqueredirect") return HttpWire.redirected(undefined, undefined)
  return web.value.redirected ? HttpWire.redirected(undefined, web.value.url) : undefined
}

/**
 * A wire over the given `HttpClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (httpClient: HttpClient.HttpClient): HttpWire.Service => {
  // `Transport`'s span carries method, path, model and status; the client's
  // own span would repeat it per attempt. `HttpWire.traced` sends the
  // `traceparent` (the client's propagation goes with its span). Scoped: the
  // exchange is aborted when its scope closes, read to the end or not.
  const client = HttpClient.withScope(httpClient)
  const execute = (request: HttpWire.Request): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpWire.WireError, Scope.Scope> =>
    Effect.flatMap(HttpWire.traced(request), (request) => {
      const { headers, payload } = HttpWire.outgoing(request)
      const body = payload === undefined ? undefined : HttpBody.text(payload, headers["content-type"])
      return Effect.mapError(
        client.execute(HttpClientRequest.make(request.method)(request.url, {
          headers: Decoding.acceptEncoding(headers),
          ...(body === undefined ? {} : { body })
        })),
        (cause: HttpClientError.HttpClientError) => new HttpWire.WireError({ reason: "request", cause: cause.cause ?? cause })
      ).pipe(
        Effect.provideService(HttpClient.TracerDisabledWhen, noTracing),
        noRedirects,
        Effect.flatMap((response) => {
          const redirect = hiddenRedirect(response)
          return redirect === undefined ? Effect.succeed(response) : Effect.fail(redirect)
        })
      )
    })
  return {
    text: (request, limits, onHead) => {
      const exchange = Effect.scoped(Effect.flatMap(execute(request), (response) => {
        onHead?.()
        return readText(response, limits?.maxBytes)
      }))
      return limits?.timeoutMillis === undefined ? exchange : Effect.timeoutOrElse(exchange, {
        duration: limits.timeoutMillis,
        orElse: () => Effect.fail(HttpWire.timeout("request"))
      })
    },
    open: (request, limits) => open(execute(request), limits)
  }
}

/**
 * Opens an exchange under `WireLimits.StreamDeadlines`: a limit that runs
 * out fails what waits (the head, or a read of the body) and the exchange
 * is aborted with the scope, or by the interruption of what waited.
 */
const open = (
  execute: Effect.Effect<HttpClientResponse.HttpClientResponse, HttpWire.WireError, Scope.Scope>,
  limits: HttpWire.Limits | undefined
): Effect.Effect<HttpWire.OpenResponse, HttpWire.WireError, Scope.Scope> =>
  Effect.flatMap(WireLimits.clockTimers, (timers) => {
    let timedOut: HttpWire.WireError | undefined
    const waiters = new Set<(exit: Exit.Exit<never, HttpWire.WireError>) => void>()
    const deadlines = new WireLimits.StreamDeadlines(limits, timers, (limit) => {
      timedOut = HttpWire.timeout(limit)
      for (const wake of waiters) wake(Exit.fail(timedOut))
    })
    /** `effect`, or the limit that runs out first (which interrupts it). */
    const limited = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | HttpWire.WireError, R> => {
      const expiry = Effect.callback<never, HttpWire.WireError>((resume) => {
        if (timedOut !== undefined) return resume(Effect.fail(timedOut))
        waiters.add(resume)
        return Effect.sync(() => waiters.delete(resume))
      })
      return Effect.raceFirst(effect, expiry)
    }
    return Effect.andThen(
      Effect.addFinalizer(() => Effect.sync(() => deadlines.end())),
      Effect.map(limited(execute), (response): HttpWire.OpenResponse => ({
        status: response.status,
        headers: response.headers,
        body: limitedBody(bodyOf(response), deadlines, limited),
        commit: deadlines.commit
      }))
    )
  })

/** The body, each read timed by `deadlines`; its end ends them. */
const limitedBody = (
  body: Stream.Stream<Uint8Array, HttpWire.WireError>,
  deadlines: WireLimits.StreamDeadlines,
  limited: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | HttpWire.WireError, R>
): Stream.Stream<Uint8Array, HttpWire.WireError> =>
  Stream.transformPull(body, (pull: Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, HttpWire.WireError>) =>
    Effect.succeed(
      Effect.suspend(() => {
        deadlines.waiting(true)
        return limited(pull).pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              deadlines.waiting(false)
              if (Exit.isSuccess(exit)) {
                deadlines.arrived()
                deadlines.delivered()
              } else if (!Cause.hasInterruptsOnly(exit.cause)) {
                deadlines.end()
              }
            })
          )
        )
      })
    )
  )

/**
 * The wire over whatever `HttpClient` is provided.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HttpWire.HttpWire, never, HttpClient.HttpClient> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(HttpWire.HttpWire, Effect.map(Effect.service(HttpClient.HttpClient), make)))
