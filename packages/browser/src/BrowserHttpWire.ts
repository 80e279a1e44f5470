/**
 * The `HttpWire` over the page's `fetch`, with nothing in between: no
 * `@effect/platform` `HttpClient` (its request, response, headers, cookies
 * and URL-parameter modules are about 4.5 KB of a page's gzipped bundle;
 * docs/performance.md, browser bundle). One `AbortController` per exchange
 * ends it on interruption, on a time limit, or when the body's scope closes.
 *
 * @since 0.1.0
 */
import * as HttpWire from "@switchboard/core/HttpWire"
import * as Decoding from "@switchboard/core/internal/decoding"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"

/** One read of a body: bytes, a failure, or `Cause.Done` at its end. */
type BodyPull = Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, HttpWire.WireError>

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
const refused = (response: Response): HttpWire.WireError | undefined => {
  const codings = Decoding.codingsOf(response.headers.get("content-encoding") ?? undefined, "zstd")
  return codings instanceof HttpWire.WireError ? codings : undefined
}

/**
 * `accept-encoding` is the browser's to set (it drops ours); Node's fetch
 * takes it, and decodes br too.
 */
const send = (request: HttpWire.Request, signal: AbortSignal) => {
  const { headers, payload } = HttpWire.outgoing(request)
  return fetch(request.url, {
    method: request.method,
    headers: Decoding.acceptEncoding(headers),
    ...(payload === undefined ? {} : { body: payload as BodyInit }),
    signal
  })
}

/**
 * The body as a stream of reads. After the first read, a read that waits
 * longer than `idleMillis` fails the stream with a `timeout` and aborts the
 * exchange: one timer for the whole body, which on firing checks when the
 * last read started or ended and sets itself again for what is left.
 */
const bodyOf = (
  response: Response,
  controller: AbortController,
  idleMillis: number | undefined,
  onEnd: () => void
): Stream.Stream<Uint8Array, HttpWire.WireError> => {
  const body = response.body
  if (body === null) return Stream.empty
  const reader = body.getReader()
  let reads = 0
  let lastActivity = 0
  let waiting: ((effect: BodyPull) => void) | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  const checkIdle = () => {
    timer = undefined
    if (idleMillis === undefined) return
    const silent = Date.now() - lastActivity
    if (waiting !== undefined && silent >= idleMillis) {
      const resume = waiting
      waiting = undefined
      resume(Effect.fail(HttpWire.timeout("idle")))
      controller.abort()
      return
    }
    timer = setTimeout(checkIdle, waiting === undefined ? idleMillis : idleMillis - silent)
  }
  const pull: BodyPull = Effect.callback((resume) => {
    waiting = resume
    if (reads > 0 && idleMillis !== undefined) {
      lastActivity = Date.now()
      timer ??= setTimeout(checkIdle, idleMillis)
    }
    const settle = (effect: BodyPull) => {
      if (waiting !== resume) return
      waiting = undefined
      lastActivity = Date.now()
      resume(effect)
    }
    reader.read().then(
      ({ done, value }) => {
        reads++
        if (done) {
          clearTimeout(timer)
          onEnd()
        }
        settle(done ? Cause.done() : Effect.succeed([value]))
      },
      (cause: unknown) => {
        clearTimeout(timer)
        settle(Effect.fail(Decoding.readFailure(cause)))
      }
    )
    return Effect.sync(() => {
      waiting = undefined
    })
  })
  return Stream.ensuring(Stream.fromPull(Effect.succeed(pull)), Effect.sync(() => clearTimeout(timer)))
}

/**
 * The first `max` bytes of the body as text, and whether it is longer; the
 * rest is never read (the caller aborts the exchange).
 */
const readAtMost = async (response: Response, max: number): Promise<{ text: string; over: boolean }> => {
  if (response.body === null) return { text: "", over: false }
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let text = ""
  let size = 0
  while (size <= max) {
    const { done, value } = await reader.read()
    if (done) return { text: text + decoder.decode(), over: false }
    text += decoder.decode(value.subarray(0, Math.max(0, max - size)), { stream: true })
    size += value.length
  }
  return { text: text + decoder.decode(), over: true }
}

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
    Effect.callback<HttpWire.TextResponse, HttpWire.WireError>((resume) => {
      const controller = new AbortController()
      let settled = false
      const settle = (effect: Effect.Effect<HttpWire.TextResponse, HttpWire.WireError>) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resume(effect)
      }
      const timer = limits?.timeoutMillis === undefined ? undefined : setTimeout(() => {
        settle(Effect.fail(HttpWire.timeout("request")))
        controller.abort()
      }, limits.timeoutMillis)
      send(request, controller.signal).then(
        (response) => {
          const success = response.status >= 200 && response.status < 300
          const max = success ? limits?.maxBytes : HttpWire.maxErrorBytes
          const tooLarge = () => {
            settle(Effect.fail(new HttpWire.WireError({ reason: "too-large" })))
            controller.abort()
          }
          const reply = (text: string) => settle(Effect.succeed({ status: response.status, headers: headersOf(response.headers), text }))
          // A body that does not decode: a 2xx fails; any other status keeps its status, with no text.
          const undecodable = (error: HttpWire.WireError) => {
            controller.abort()
            if (success) settle(Effect.fail(error))
            else reply("")
          }
          const refusal = refused(response)
          if (refusal !== undefined) return undecodable(refusal)
          // A coded body's length is its coded size, not the decoded size the limit counts.
          const plain = !response.headers.has("content-encoding")
          if (success && max !== undefined && plain && Number(response.headers.get("content-length")) > max) return tooLarge()
          const read = max === undefined ? response.text().then((text) => ({ text, over: false })) : readAtMost(response, max)
          read.then(
            ({ over, text }) => {
              if (over) controller.abort()
              if (over && success) return tooLarge()
              reply(text)
            },
            (cause: unknown) => {
              const error = Decoding.readFailure(cause)
              if (error.reason === "decode") undecodable(error)
              else settle(Effect.fail(error))
            }
          )
        },
        (cause: unknown) => settle(Effect.fail(new HttpWire.WireError({ reason: "request", cause })))
      )
      return Effect.sync(() => {
        settled = true
        clearTimeout(timer)
        controller.abort()
      })
    }),
  // The abort is in the scope before the request leaves: whatever ends the
  // scope (interruption while waiting for headers included) ends the exchange.
  // The total limit is one timer from the start to the body's end; the
  // first-byte limit one from the start to `commit`.
  open: (request, limits) =>
    Effect.flatMap(
      Effect.acquireRelease(
        Effect.sync(() => ({
          controller: new AbortController(),
          timer: undefined as ReturnType<typeof setTimeout> | undefined,
          firstByteTimer: undefined as ReturnType<typeof setTimeout> | undefined
        })),
        (exchange) =>
          Effect.sync(() => {
            clearTimeout(exchange.timer)
            clearTimeout(exchange.firstByteTimer)
            exchange.controller.abort()
          })
      ),
      (exchange) => {
        let timedOut: "first-byte" | "total" | undefined
        const limit = (which: "first-byte" | "total", millis: number | undefined) =>
          millis === undefined ? undefined : setTimeout(() => {
            timedOut = which
            exchange.controller.abort()
          }, millis)
        exchange.timer = limit("total", limits?.totalMillis)
        exchange.firstByteTimer = limit("first-byte", limits?.firstByteMillis)
        // An abort by a limit surfaces as a failed fetch or read: name it.
        const failure = (reason: "request" | "response", cause: unknown) =>
          timedOut !== undefined ? HttpWire.timeout(timedOut) : new HttpWire.WireError({ reason, cause })
        return Effect.map(
          Effect.tryPromise({ try: () => send(request, exchange.controller.signal), catch: (cause) => failure("request", cause) }),
          (response): HttpWire.OpenResponse => {
            const refusal = refused(response)
            const body = refusal !== undefined ? Stream.fail(refusal) : bodyOf(response, exchange.controller, limits?.idleMillis, () => {
              clearTimeout(exchange.timer)
              clearTimeout(exchange.firstByteTimer)
            })
            return {
              status: response.status,
              headers: headersOf(response.headers),
              body: Stream.mapError(body, (error) => error.reason === "response" ? failure("response", error.cause) : error),
              commit: () => clearTimeout(exchange.firstByteTimer)
            }
          }
        )
      }
    )
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HttpWire.HttpWire> = Layer.sync(HttpWire.HttpWire, make)
