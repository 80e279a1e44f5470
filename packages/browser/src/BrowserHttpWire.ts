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

/** Names in lower case, repeated values joined by `, `: what `Headers` iterates as. */
const headersOf = (headers: Headers): Record<string, string> => {
  const out: Record<string, string> = {}
  headers.forEach((value, name) => {
    out[name] = value
  })
  return out
}

/**
 * fetch undoes the body's codings by itself (browsers and Node's undici
 * alike), keeping `content-encoding` in the headers; what is left to the wire
 * is refusing a coding fetch passes on undecoded. zstd is let through: a
 * browser that asked for it decodes it. (Cross-origin, `content-encoding` is
 * hidden unless exposed: then fetch alone judges.)
 */
const refused = (headers: Readonly<Record<string, string>>): HttpWire.WireError | undefined => {
  const codings = Decoding.codingsOf(headers["content-encoding"], "zstd")
  return codings instanceof HttpWire.WireError ? codings : undefined
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
  response: Response,
  body: WireLimits.TextBody,
  abort: () => void
): Promise<string | HttpWire.WireError> => {
  const reader = response.body?.getReader()
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
    const error = Decoding.readFailure(cause)
    return (error.reason === "decode" ? body.undecodable(error) : error) ?? body.text()
  }
}

/** Sends `request` and reads the whole body; interruption aborts the exchange. */
const exchangeText = (request: HttpWire.Request, maxBytes: number | undefined) =>
  Effect.callback<HttpWire.TextResponse, HttpWire.WireError>((resume) => {
    const controller = new AbortController()
    const abort = () => controller.abort()
    send(request, controller.signal).then(
      async (response) => {
        const redirect = hiddenRedirect(response)
        if (redirect !== undefined) return resume(Effect.fail(redirect))
        const head = { status: response.status, headers: headersOf(response.headers) }
        const body = new WireLimits.TextBody(head, maxBytes)
        const refusal = refused(head.headers)
        if (refusal !== undefined || body.declaredTooLarge) abort()
        const outcome = refusal !== undefined ?
          body.undecodable(refusal) ?? "" :
          body.declaredTooLarge ?
          WireLimits.tooLarge() :
          await readWhole(response, body, abort)
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
  response: Response,
  deadlines: WireLimits.StreamDeadlines,
  failure: (cause: unknown) => HttpWire.WireError
): Stream.Stream<Uint8Array, HttpWire.WireError> => {
  const reader = response.body?.getReader()
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
    const failure = (reason: "request" | "response", cause: unknown) =>
      timedOut !== undefined ?
        HttpWire.timeout(timedOut) :
        reason === "response" ?
        Decoding.readFailure(cause) :
        new HttpWire.WireError({ reason, cause })
    return Effect.andThen(
      Effect.addFinalizer(() =>
        Effect.sync(() => {
          deadlines.end()
          controller.abort()
        })
      ),
      Effect.map(
        Effect.flatMap(
          Effect.tryPromise({ try: () => send(request, controller.signal), catch: (cause) => failure("request", cause) }),
          (response) => {
            const redirect = hiddenRedirect(response)
            return redirect === undefined ? Effect.succeed(response) : Effect.fail(redirect)
          }
        ),
        (response): HttpWire.OpenResponse => {
          const headers = headersOf(response.headers)
          const refusal = refused(headers)
          return {
            status: response.status,
            headers,
            body: refusal !== undefined ? Stream.fail(refusal) : bodyOf(response, deadlines, (cause) => failure("response", cause)),
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
  text: (request, limits) =>
    Effect.flatMap(HttpWire.traced(request), (request) => {
      const exchange = exchangeText(request, limits?.maxBytes)
      return limits?.timeoutMillis === undefined ? exchange : Effect.timeoutOrElse(exchange, {
        duration: limits.timeoutMillis,
        orElse: () => Effect.fail(HttpWire.timeout("request"))
      })
    }),
  open: (request, limits) => Effect.flatMap(HttpWire.traced(request), (request) => exchangeOpen(request, limits))
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HttpWire.HttpWire> = Layer.sync(HttpWire.HttpWire, make)
