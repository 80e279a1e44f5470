/**
 * The `HttpWire` over undici's `Dispatcher.dispatch`, with no stream or
 * promise in between: a JSON call is one dispatch whose handler gathers the
 * body and resumes the fiber once. Interruption aborts the exchange through
 * the dispatch controller, so no `AbortSignal` is made per call. The time
 * and size limits are core's `WireLimits`, shared by every wire, on the
 * runtime's timers whatever the fiber's clock (a `TestClock` does not move
 * them: tests of time limits use `HttpClientWire`). Measured in `docs/performance.md`.
 *
 * Proxies: `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (or their lower-case
 * forms) are honoured by default, as curl and Node's own fetch
 * (`NODE_USE_ENV_PROXY`) take them; `proxy: "none"` turns that off, and
 * `dispatcher` hands the wire an undici `Dispatcher` of the caller's
 * (docs/getting-started.md, proxies).
 *
 * @since 0.1.0
 */
import * as HttpWire from "@switchboard/core/HttpWire"
import { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as Decoding from "@switchboard/core/internal/decoding"
import * as WireLimits from "@switchboard/core/WireLimits"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import { createRequire } from "node:module"
import type { Agent as UndiciAgent, Dispatcher, EnvHttpProxyAgent as UndiciEnvHttpProxyAgent } from "undici"

// undici's index loads every dispatcher, `fetch`, WebSocket, the cache and
// the mocks: about 70 ms of CPU and 9 MB at start, of which the wire needs
// the `Agent` alone (a third of it; docs/performance.md, cold start).
// undici has no `exports` map, so its own module is reachable.
const require = createRequire(import.meta.url)
const Agent = require("undici/lib/dispatcher/agent.js") as typeof UndiciAgent

// Loaded at the first coded reply: most programs never get one.
let zlib: Decoding.Zlib | undefined
const zlibModule = () => (zlib ??= require("node:zlib") as Decoding.Zlib)

type Controller = Dispatcher.DispatchController
/** One read of a body: a batch of bytes, a failure, or `Cause.Done` at its end. */
type BodyPull = Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, HttpWire.WireError>
type RawHeaders = Record<string, string | Array<string> | undefined>

/** Repeated headers joined, as `Headers` does; most responses have none. */
const flatHeaders = (raw: RawHeaders): Record<string, string> => {
  let flat: Record<string, string> | undefined
  for (const name in raw) {
    const value = raw[name]
    if (typeof value !== "string") {
      flat ??= { ...raw } as Record<string, string>
      if (value === undefined) delete flat[name]
      else flat[name] = value.join(", ")
    }
  }
  return flat ?? (raw as Record<string, string>)
}

/** Where a URL points, as undici takes it; the last one kept: a transport sends to few URLs, over and over. */
let lastUrl: string | undefined
let lastTarget = { origin: "", path: "" }
const targetOf = (href: string) => {
  if (href !== lastUrl) {
    const url = new URL(href)
    lastTarget = { origin: url.origin, path: url.pathname + url.search }
    lastUrl = href
  }
  return lastTarget
}

/**
 * The request with `accept-encoding`, added before `HttpWire.traced` copies
 * the headers for the call's `traceparent`: `Decoding.acceptEncoding` then
 * keeps one copy per headers object `Transport` reuses, not one per call.
 */
const accepting = (request: HttpWire.Request): HttpWire.Request => {
  const headers = Decoding.acceptEncoding(request.headers)
  return headers === request.headers ? request : { ...request, headers }
}

/** A prepared (`accepting`, `HttpWire.traced`) request as undici's dispatch takes it. */
const dispatchOptions = (request: HttpWire.Request): Dispatcher.DispatchOptions => {
  const { origin, path } = targetOf(request.url)
  const { headers, payload } = HttpWire.outgoing(request)
  return { origin, path, method: request.method, headers, body: payload ?? null }
}

const noHeaders: Record<string, string> = {}
const ignore = () => {}

const interrupted = () => new Error("the request was interrupted")

/**
 * Whether a head is an informational one (1xx: 100 Continue, 103 Early
 * Hints), which undici hands on before the reply's own: not the reply.
 */
const informational = (status: number): boolean => status < 200

/**
 * What every exchange's handler shares: the controller, which may come after
 * an abort was asked for (the request was still queued).
 */
abstract class Exchange implements Dispatcher.DispatchHandler {
  controller: Controller | undefined
  status = 0
  headers: Record<string, string> = noHeaders
  settled = false
  /** Undoes the body's `content-encoding`, when it has one. */
  decoder: Decoding.Decoder | undefined

  onRequestStart(controller: Controller) {
    this.controller = controller
    if (this.settled) controller.abort(interrupted())
  }

  onResponseStart(_controller: Controller, status: number, headers: RawHeaders) {
    this.status = status
    this.headers = flatHeaders(headers)
  }

  /** Ends the exchange from our side: interruption, a timeout, a closed scope. */
  abort() {
    if (this.settled) return
    this.settled = true
    this.decoder?.destroy()
    this.controller?.abort(interrupted())
  }

  /**
   * Drops what the exchange holds once it is over. The fiber's effects keep
   * the exchange reachable for a while after it ended; measured, holding on
   * to undici's controller and the response through it costs about 40 MB of
   * peak RSS and a fifth of the CPU under load (docs/performance.md).
   */
  protected release() {
    this.decoder?.destroy()
    this.decoder = undefined
    this.controller = undefined
    this.headers = noHeaders
  }

  /**
   * The body's codings, or the failure of a coding the wire does not take;
   * `undefined` for a plain body, the common case, at the cost of one lookup.
   */
  protected codings(): ReadonlyArray<Decoding.Coding> | HttpWire.WireError | undefined {
    const header = this.headers["content-encoding"]
    return header === undefined ? undefined : Decoding.codingsOf(header)
  }

  /** Decoded bytes, as they come. */
  abstract receive(chunk: Uint8Array): void
  /** The decoded body has ended. */
  abstract complete(): void

  /** Decodes through `codings`, pausing the socket while the decoder is full. */
  protected decode(codings: ReadonlyArray<Decoding.Coding>, fail: (error: HttpWire.WireError) => void) {
    this.decoder = Decoding.make(zlibModule(), codings, {
      data: (chunk) => this.receive(chunk),
      end: () => this.complete(),
      error: fail,
      drain: () => this.controller?.resume()
    })
  }

  onResponseData(controller: Controller, chunk: Buffer) {
    if (this.decoder === undefined) return this.receive(chunk)
    if (!this.decoder.write(chunk)) controller.pause()
  }

  onResponseEnd() {
    if (this.decoder === undefined) return this.complete()
    this.decoder.end()
  }


  abstract onResponseError(controller: Controller, error: Error): void
}

/**
 * Gathers a whole body through `WireLimits.TextBody`, then resumes the
 * waiting fiber once: a 2xx past `maxBytes` (or whose `content-length` says
 * it will be) fails with `too-large`; any other status's body is cut at
 * `maxErrorBytes`. Either way the exchange is aborted, and the bytes held
 * never exceed the limit by more than one read.
 */
class TextExchange extends Exchange {
  private body: WireLimits.TextBody | undefined
  private cancelTimer: (() => void) | undefined
  /** Resumes the waiting fiber; set before the dispatch. */
  resume: (effect: Effect.Effect<HttpWire.TextResponse, HttpWire.WireError>) => void = ignore

  constructor(
    timeoutMillis: number | undefined,
    private readonly maxBytes: number | undefined,
    private readonly onHead: (() => void) | undefined
  ) {
    super()
    if (timeoutMillis !== undefined) {
      this.cancelTimer = WireLimits.systemTimers.set(timeoutMillis, () => {
        const controller = this.controller
        this.finish(Effect.fail(HttpWire.timeout("request")))
        controller?.abort(new Error("timed out"))
      })
    }
  }

  override onResponseStart(controller: Controller, status: number, headers: RawHeaders) {
    if (informational(status)) return
    super.onResponseStart(controller, status, headers)
    this.onHead?.()
    const body = (this.body = new WireLimits.TextBody({ status, headers: this.headers }, this.maxBytes))
    if (body.declaredTooLarge) return this.tooLarge()
    const codings = this.codings()
    if (codings === undefined) return
    if (codings instanceof HttpWire.WireError) return this.undecodable(codings)
    this.decode(codings, (error) => this.undecodable(error))
  }

  /**
   * A body that does not decode: a 2xx fails; any other status keeps its
   * status with what did decode, as an error body cut at its limit does.
   */
  private undecodable(error: HttpWire.WireError) {
    const controller = this.controller
    const failure = this.body?.undecodable(error)
    if (failure !== undefined) this.finish(Effect.fail(failure))
    else this.complete()
    controller?.abort(new Error("undecodable body"))
  }

  receive(chunk: Uint8Array) {
    if (this.settled) return
    const verdict = this.body!.add(chunk)
    if (verdict === "more") return
    if (verdict === "too-large") return this.tooLarge()
    // An error body: its start says enough; the rest is never read.
    const controller = this.controller
    this.complete()
    controller?.abort(new Error("error body limit reached"))
  }

  private tooLarge() {
    const controller = this.controller
    this.finish(Effect.fail(WireLimits.tooLarge()))
    controller?.abort(new Error("response too large"))
  }

  complete() {
    if (this.settled) return
    this.finish(Effect.succeed({ status: this.status, headers: this.headers, text: this.body?.text() ?? "" }))
  }

  /** Interruption: the timer and what is held go at once, not when the timer fires. */
  override abort() {
    if (this.settled) return
    super.abort()
    this.cancelTimer?.()
    this.resume = ignore
    this.body = undefined
    this.release()
  }

  onResponseError(_controller: Controller, cause: Error) {
    this.finish(Effect.fail(new HttpWire.WireError({ reason: this.status === 0 ? "request" : "response", cause })))
  }

  private finish(effect: Effect.Effect<HttpWire.TextResponse, HttpWire.WireError>) {
    if (this.settled) return
    this.settled = true
    this.cancelTimer?.()
    const resume = this.resume
    this.resume = ignore
    this.body = undefined
    this.release()
    resume(effect)
  }
}

/** Most bytes held for a slow reader before the socket is paused. */
const highWaterMark = 256 * 1024

/**
 * What a body may still bring after its reader said it is done (`done`)
 * before the connection is closed rather than kept: a server ends a stream
 * right after `[DONE]`, so its rest is a few bytes that come at once.
 */
const drainBytes = 64 * 1024
const drainMillis = 1_000

/**
 * Resumes the opening fiber at the headers, then queues the body for its
 * stream: bounded (the socket pauses above `highWaterMark`), read one batch
 * per pull. The time limits are `WireLimits.StreamDeadlines` on the
 * runtime's timers: a few for the whole exchange, never one per read.
 */
class StreamExchange extends Exchange {
  private chunks: Array<Buffer> = []
  private buffered = 0
  private ended = false
  private failure: HttpWire.WireError | undefined
  private waiting: ((effect: BodyPull) => void) | undefined
  private readonly deadlines: WireLimits.StreamDeadlines
  /** The reader has all it needs (`OpenResponse.done`): closing the scope lets the body end. */
  private readerDone = false
  /** Bytes dropped while draining, or `undefined` while the body is still read. */
  private drained: number | undefined
  private cancelDrain: (() => void) | undefined

  /** Resumes the opening fiber; set before the dispatch. */
  opened: (effect: Effect.Effect<HttpWire.OpenResponse, HttpWire.WireError>) => void = () => {}

  constructor(limits: HttpWire.Limits | undefined) {
    super()
    this.deadlines = new WireLimits.StreamDeadlines(limits, WireLimits.systemTimers, (limit) => this.timedOut(limit))
  }

  readonly pull: BodyPull = Effect.suspend(() => {
    const next = this.next()
    if (next !== undefined) return next
    return Effect.callback((resume) => {
      this.waiting = resume
      this.deadlines.waiting(true)
      return Effect.sync(() => {
        this.waiting = undefined
        this.deadlines.waiting(false)
      })
    })
  })

  /** What a pull gets without waiting, if anything. */
  private next(): BodyPull | undefined {
    if (this.chunks.length > 0) {
      const batch = this.chunks as unknown as Arr.NonEmptyReadonlyArray<Uint8Array>
      this.chunks = []
      this.buffered = 0
      this.deadlines.delivered()
      if (this.decoder !== undefined) this.decoder.resume()
      else if (this.controller?.paused) this.controller.resume()
      return Effect.succeed(batch)
    }
    if (this.failure !== undefined) return Effect.fail(this.failure)
    if (this.ended) return Cause.done()
    return undefined
  }

  private wake() {
    const resume = this.waiting
    if (resume === undefined) return
    const next = this.next()
    if (next === undefined) return
    this.waiting = undefined
    this.deadlines.waiting(false)
    resume(next)
  }

  override onResponseStart(controller: Controller, status: number, headers: RawHeaders) {
    if (informational(status)) return
    super.onResponseStart(controller, status, headers)
    this.opened(Effect.succeed({
      status: this.status,
      headers: this.headers,
      body: Stream.fromPull(Effect.succeed(this.pull)),
      commit: this.deadlines.commit,
      done: this.done
    }))
    // The head is the caller's either way (a 4xx keeps its status); the body fails.
    const codings = this.codings()
    if (codings instanceof HttpWire.WireError) this.fail(codings)
    else if (codings !== undefined) this.decode(codings, (error) => this.fail(error))
  }

  readonly done = (): void => {
    this.readerDone = true
  }

  /**
   * The exchange's scope closed. Unless the reader said it was done, the
   * exchange is aborted, which closes the connection (interruption, a
   * failure, a reader that stopped early). After `done`, the rest of the body
   * is read and dropped, so that undici keeps the connection for the next
   * request, unless it is longer than `drainBytes` or slower than
   * `drainMillis`: reconnecting for every stream cost more CPU per chunk than
   * decoding (docs/decisions.md).
   */
  close() {
    if (this.settled) return
    if (!this.readerDone) return this.abort()
    this.drained = this.buffered
    this.chunks = []
    this.buffered = 0
    this.deadlines.end()
    if (this.drained > drainBytes) return this.abort()
    // Unref'd: the socket, not this timer, is what keeps a process alive meanwhile.
    const timer = setTimeout(() => this.abort(), drainMillis)
    timer.unref()
    this.cancelDrain = () => clearTimeout(timer)
    if (this.decoder !== undefined) this.decoder.resume()
    else if (this.controller?.paused) this.controller.resume()
  }

  /** Decoded bytes; above the high-water mark the decoder pauses, or the socket when nothing is coded. */
  receive(chunk: Uint8Array) {
    if (this.drained !== undefined) {
      this.drained += chunk.length
      if (this.drained > drainBytes) this.abort()
      return
    }
    this.chunks.push(chunk as Buffer)
    this.buffered += chunk.length
    this.deadlines.arrived()
    if (this.waiting !== undefined) this.wake()
    else if (this.buffered > highWaterMark) {
      if (this.decoder !== undefined) this.decoder.pause()
      else this.controller?.pause()
    }
  }

  complete() {
    this.ended = true
    this.settled = true
    this.controller = undefined
    this.deadlines.end()
    this.cancelDrain?.()
    this.wake()
  }

  onResponseError(_controller: Controller, cause: Error) {
    if (this.settled) return
    this.settled = true
    this.deadlines.end()
    this.cancelDrain?.()
    if (this.status === 0) this.opened(Effect.fail(new HttpWire.WireError({ reason: "request", cause })))
    else this.fail(new HttpWire.WireError({ reason: "response", cause }))
  }

  /** Ends the exchange from our side; its timers go with it. */
  override abort() {
    if (this.settled) return
    super.abort()
    this.deadlines.end()
    this.cancelDrain?.()
  }

  /** A time limit ran out: before the head, the opening fails; after it, the body. */
  private timedOut(limit: WireLimits.StreamLimit) {
    const error = HttpWire.timeout(limit)
    if (this.status === 0) {
      this.abort()
      this.opened(Effect.fail(error))
    } else {
      this.fail(error)
    }
  }

  /** Fails the body (aborting the exchange if it is still on). */
  private fail(error: HttpWire.WireError) {
    if (this.failure !== undefined || this.ended) return
    this.failure = error
    this.abort()
    this.wake()
  }
}

/**
 * A wire over `dispatcher`. Each request carries the current span's
 * `traceparent` (`HttpWire.traced`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (dispatcher: Dispatcher): HttpWire.Service => ({
  // `onInterrupt` around a canceler-less `Effect.callback`, not a canceler
  // returned from it: measured on Effect 3, the latter cost a call about
  // 40 MB more peak RSS under load (docs/performance.md).
  text: (request, limits, onHead) =>
    Effect.flatMap(HttpWire.traced(accepting(request)), (request) => {
      const exchange = new TextExchange(limits?.timeoutMillis, limits?.maxBytes, onHead)
      return Effect.onInterrupt(
        Effect.callback<HttpWire.TextResponse, HttpWire.WireError>((resume) => {
          exchange.resume = resume
          dispatcher.dispatch(dispatchOptions(request), exchange)
        }),
        () => Effect.sync(() => exchange.abort())
      )
    }),
  // The close is in the scope before the request leaves: whatever ends the
  // scope (interruption while waiting for headers included) ends the exchange
  // (`StreamExchange.close`: aborted, or drained after `done`).
  open: (request, limits) =>
    Effect.flatMap(HttpWire.traced(accepting(request)), (request) => {
      const exchange = new StreamExchange(limits)
      return Effect.andThen(
        Effect.addFinalizer(() => Effect.sync(() => exchange.close())),
        Effect.callback<HttpWire.OpenResponse, HttpWire.WireError>((resume) => {
          exchange.opened = resume
          dispatcher.dispatch(dispatchOptions(request), exchange)
          return Effect.sync(() => exchange.abort())
        })
      )
    })
})

/**
 * How the wire reaches the service.
 *
 * @since 1.1.0
 * @category models
 */
export interface Options {
  /**
   * `"environment"` (the default): through the proxy that `HTTPS_PROXY`
   * (https URLs) or `HTTP_PROXY` (http URLs) names, lower-case forms first,
   * except for the hosts `NO_PROXY` lists; read when the layer is built.
   * `"none"`: always straight to the service.
   */
  readonly proxy?: "environment" | "none" | undefined
  /**
   * An undici `Dispatcher` of your own (a `ProxyAgent` with its TLS options,
   * an `Agent` with other pool limits): used as it is, `proxy` aside, and
   * not closed by the layer. Keep its `headersTimeout` and `bodyTimeout` at
   * 0 or longer than the SDK's own limits, which are the ones meant to apply.
   */
  readonly dispatcher?: Dispatcher | undefined
}

// undici's own header and body timeouts are off: `Transport`'s time limits
// (request, first byte, idle) are the ones that apply.
const agentOptions = { headersTimeout: 0, bodyTimeout: 0 }

/** The proxy variables, lower-case first (as undici, curl and Node's fetch read them). */
const proxyVariables = [["http_proxy", "HTTP_PROXY"], ["https_proxy", "HTTPS_PROXY"]] as const

/**
 * The proxies the environment names, checked: a value that is no http(s)
 * URL is a `ConfigurationError` naming the variable, never its value (it
 * may hold the proxy's password). `undefined` when none is set.
 */
const environmentProxies = (): { readonly httpProxy?: string; readonly httpsProxy?: string } | ConfigurationError | undefined => {
  const found: Record<string, string> = {}
  for (const names of proxyVariables) {
    const name = names.find((name) => (process.env[name] ?? "") !== "")
    if (name === undefined) continue
    const value = process.env[name]!
    let protocol: string | undefined
    try {
      protocol = new URL(value).protocol
    } catch {
      protocol = undefined
    }
    if (protocol !== "http:" && protocol !== "https:") {
      return new ConfigurationError({
        field: name,
        message: `${name} is not an http:// or https:// URL of a proxy; fix it, or give NodeHttpWire proxy: "none"`
      })
    }
    found[names[0] === "http_proxy" ? "httpProxy" : "httpsProxy"] = value
  }
  return Object.keys(found).length === 0 ? undefined : found
}

/** The dispatcher for `options`, and whether the layer owns it (and so destroys it). */
type Owned = { readonly dispatcher: Dispatcher; readonly owned: boolean }
const dispatcherFor = (options: Options): Effect.Effect<Owned, ConfigurationError> =>
  Effect.suspend((): Effect.Effect<Owned, ConfigurationError> => {
    if (options.proxy !== undefined && options.proxy !== "environment" && options.proxy !== "none") {
      return Effect.fail(new ConfigurationError({ field: "proxy", message: `proxy must be "environment" or "none"` }))
    }
    if (options.dispatcher !== undefined) {
      return typeof options.dispatcher?.dispatch === "function" ?
        Effect.succeed({ dispatcher: options.dispatcher, owned: false }) :
        Effect.fail(new ConfigurationError({ field: "dispatcher", message: "dispatcher must be an undici Dispatcher" }))
    }
    const proxies = options.proxy === "none" ? undefined : environmentProxies()
    if (proxies instanceof ConfigurationError) return Effect.fail(proxies)
    if (proxies === undefined) return Effect.succeed({ dispatcher: new Agent(agentOptions), owned: true })
    // Loaded only when a proxy is set: most programs never pay for it.
    const EnvHttpProxyAgent = require("undici/lib/dispatcher/env-http-proxy-agent.js") as typeof UndiciEnvHttpProxyAgent
    const noProxy = process.env["no_proxy"] ?? process.env["NO_PROXY"] ?? ""
    return Effect.succeed({ dispatcher: new EnvHttpProxyAgent({ ...agentOptions, ...proxies, noProxy }), owned: true })
  })

/**
 * The wire as `options` say (see `Options`). A dispatcher it makes (an
 * undici `Agent`, keep-alive, or a proxying one) is destroyed with the
 * layer. Fails with `ConfigurationError` when a proxy variable is set to
 * something that is no proxy URL.
 *
 * @since 1.1.0
 * @category layers
 */
export const layerWith = (options: Options = {}): Layer.Layer<HttpWire.HttpWire, ConfigurationError> =>
  Layer.effect(
    HttpWire.HttpWire,
    Effect.map(
      Effect.acquireRelease(dispatcherFor(options), ({ dispatcher, owned }) =>
        owned ? Effect.promise(() => dispatcher.destroy()) : Effect.void),
      ({ dispatcher }) => make(dispatcher)
    )
  )

/**
 * The wire with the defaults: `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`
 * honoured, else straight over an undici `Agent` of its own (keep-alive),
 * destroyed with the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<HttpWire.HttpWire, ConfigurationError> = layerWith()
