/**
 * The `HttpWire` over the page's `fetch`, with nothing in between: no
 * `effect/http` `HttpClient` (its request, response, headers, URL and body
 * modules would weigh on every page; docs/browser.md, bundle size). One
 * `AbortController` per exchange ends it on interruption, on a time limit,
 * or when the body's scope closes. The limits are core's `WireLimits`, on
 * the fiber's clock (a `TestClock` drives them); every request carries the
 * current span's `traceparent` (`HttpWire.traced`).
 *
 * @since 0.1.0
 */
import * as HttpWire from "@switchboard/core/HttpWire"
import * as Decoding from "@switchboard/core/internal/decoding"
import * as WireLimits from "@switchboard/core/WireLimits"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as WebDecoding from "./internal/decoding.js"

/** Names in lower case, repeated values joined by `, `: what `Headers` iterates as. */
const headersOf = (headers: Headers): Record<string, string> => {
  const out: Record<string, string> = {}
  headers.forEach((value, name) => {
    out[name] = value
  })
  return out
}

/**
 * `accept-encoding` is the browser's to set (it drops ours); Node's fetch
 * takes it, and decodes br too. Redirects are never followed (a followed
 * one hands the request's headers and body to whatever host it names):
 * Node's fetch then hands on the 3xx with its location, a browser an opaque
 * redirect, which `hiddenRedirect` names.
 */
const send = (request: HttpWire.Request, signal: AbortSignal) => {
  const { headers, payload } = HttpWire.outgoing(request)
  return fetch(request.url, {
    method: request.method,
    headers: Decoding.acceptEncoding(headers),
    ...(payload === undefined ? {} : { body: payload }),
    redirect: "manual",
    signal
  })
}

/** A browser's opaque redirect (status 0: the page may not see the status or where it points). */
const hiddenRedirect = (response: Response): HttpWire.WireError | undefined =>
  response.type === "opaqueredirect" ? HttpWire.redirected(undefined, undefined) : undefined

/**
 * A whole body through `WireLimits.TextBody`: its text, or why it failed.
 * Once the body has all it takes (or is too large), the exchange is aborted
 * and the rest never read.
 */
const readWhole = async (
  readable: WebDecoding.Readable,
  body: WireLimits.TextBody,
  abort: () => void
): Promise<string | HttpWire.WireError> => {
  const reader = readable.body?.getReader()
  if (reader === undefined) return body.text()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return body.text()
      const verdict = body.add(value)
      if (verdict === "more") continue
      abort()
      return verdict === "too-large" ? WireLimits.tooLarge() : body.text()
    }
  } catch (cause) {
    abort()
    const error = readable.failure(cause)
    return (error.reason === "decode" ? body.undecodable(error) : error) ?? body.text()
  }
}

/** Sends `request` and reads the whole body (`onHead` told when fetch has the head); interruption aborts the exchange. */
const exchangeText = (request: HttpWire.Request, maxBytes: number | undefined, onHead: (() => void) | undefined) =>
  Effect.callback<HttpWire.TextResponse, HttpWire.WireError>((resume) => {
    const controller = new AbortController()
    const abort = () => controller.abort()
    send(request, controller.signal).then(
      async (response) => {
        const redirect = hiddenRedirect(response)
        if (redirect !== undefined) return resume(Effect.fail(redirect))
        onHead?.()
        const head = { status: response.status, headers: headersOf(response.headers) }
        const body = new WireLimits.TextBody(head, maxBytes)
        const readable = WebDecoding.readableOf(response, head.headers["content-encoding"])
        const refused = readable instanceof HttpWire.WireError
        if (refused || body.declaredTooLarge) abort()
        const outcome = refused ?
          body.undecodable(readable) ?? "" :
          body.declaredTooLarge ?
          WireLimits.tooLarge() :
          await readWhole(readable, body, abort)
        resume(typeof outcome === "string" ? Effect.succeed({ ...head, text: outcome }) : Effect.fail(outcome))
      },
      (cause: unknown) => resume(Effect.fail(new HttpWire.WireError({ reason: "request", cause })))
    )
    return Effect.sync(abort)
  })

/**
 * The body as a stream of reads, each one told to `deadlines` (the idle
 * limit counts the reader's waits); its end ends them. `failure` names a
 * read that failed because a limit aborted the exchange.
 */
const bodyOf = (
  body: ReadableStream<Uint8Array> | null,
  deadlines: WireLimits.StreamDeadlines,
  failure: (cause: unknown) => HttpWire.WireError
): Stream.Stream<Uint8Array, HttpWire.WireError> => {
  const reader = body?.getReader()
  if (reader === undefined) {
    deadlines.end()
    return Stream.empty
  }
  const pull = Effect.callback<Arr.NonEmptyReadonlyArray<Uint8Array>, HttpWire.WireError | Cause.Done>((resume) => {
    deadlines.waiting(true)
    reader.read().then(
      ({ done, value }) => {
        deadlines.waiting(false)
        if (done) {
          deadlines.end()
          return resume(Cause.done())
        }
        deadlines.arrived()
        deadlines.delivered()
        resume(Effect.succeed([value]))
      },
      (cause: unknown) => {
        deadlines.waiting(false)
        resume(Effect.fail(failure(cause)))
      }
    )
    return Effect.sync(() => deadlines.waiting(false))
  })
  return Stream.fromPull(Effect.succeed(pull))
}

/**
 * Opens an exchange under `WireLimits.StreamDeadlines`. A limit that runs
 * out aborts the exchange: the fetch or the read that waited fails, and is
 * named after the limit. The abort is in the scope before the request
 * leaves, so whatever ends the scope (interruption while waiting for the
 * head included) ends the exchange.
 */
const exchangeOpen = (request: HttpWire.Request, limits: HttpWire.Limits | undefined) =>
  Effect.flatMap(WireLimits.clockTimers, (timers) => {
    const controller = new AbortController()
    let timedOut: WireLimits.StreamLimit | undefined
    const deadlines = new WireLimits.StreamDeadlines(limits, timers, (limit) => {
      timedOut = limit
      controller.abort()
    })
    const failure = (cause: unknown, read?: WebDecoding.Readable) =>
      timedOut !== undefined ?
        HttpWire.timeout(timedOut) :
        read !== undefined ?
        read.failure(cause) :
        new HttpWire.WireError({ reason: "request", cause })
    return Effect.andThen(
      Effect.addFinalizer(() =>
        Effect.sync(() => {
          deadlines.end()
          controller.abort()
        })
      ),
      Effect.map(
        Effect.flatMap(
          Effect.tryPromise({ try: () => send(request, controller.signal), catch: (cause) => failure(cause) }),
          (response) => {
            const redirect = hiddenRedirect(response)
            return redirect === undefined ? Effect.succeed(response) : Effect.fail(redirect)
          }
        ),
        (response): HttpWire.OpenResponse => {
          const headers = headersOf(response.headers)
          const readable = WebDecoding.readableOf(response, headers["content-encoding"])
          return {
            status: response.status,
            headers,
            body: readable instanceof HttpWire.WireError ?
              Stream.fail(readable) :
              bodyOf(readable.body, deadlines, (cause) => failure(cause, readable)),
            commit: deadlines.commit
          }
        }
      )
    )
  })

/**
 * A wire over the global `fetch`. A 2xx body past `Limits.maxBytes` (or
 * whose `content-length` says it will be) fails with `too-large`; any other
 * status's body is cut at `HttpWire.maxErrorBytes`. Either way the exchange
 * is aborted.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): HttpWire.Service => ({
  text: (request, limits, onHead) =>
    Effect.flatMap(HttpWire.traced(request), (request) => {
      const exchange = exchangeText(request, limits?.maxBytes, onHead)
      return limits?.timeoutMillis === undefined ? exchange : Effect.timeoutOrElse(exchange, {
        duration: limits.timeoutMillis,
        orElse: () => Effect.fail(HttpWire.timeout("request"))
      })
    }),
  open: (request, limits) => Effect.flatMap(HttpWire.traced(request), (request) => exchangeOpen(request, limits))
})

/**
 * The `HttpWire` over the browser's `fetch`, for programs that build their
 * own layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HttpWire.HttpWire> = Layer.sync(HttpWire.HttpWire, make)
