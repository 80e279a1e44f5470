/**
 * A local, deterministic implementation of the Switchboard service on
 * 127.0.0.1, for tests, demos and offline development. Any client of the
 * widely used chat-completions format works against `<url>/v1` unchanged.
 * The rules behind every reply and the fault injection are documented in
 * `docs/emulator.md`.
 *
 * @since 0.1.0
 */
import * as EffectVersion from "@switchboard/core/EffectVersion"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { ServeError } from "effect/http/HttpServerError"
import * as Layer from "effect/Layer"
import * as Cors from "./internal/cors.js"
import type * as Faults from "./internal/faults.js"
import * as Models from "./internal/models.js"
import * as Server from "./internal/server.js"

/**
 * The name of the emulator's small chat model.
 *
 * @since 0.1.0
 * @category models
 */
export const chatMiniModel = Models.chatMini

/**
 * The name of the emulator's chat model.
 *
 * @since 0.1.0
 * @category models
 */
export const chatModel = Models.chat

/**
 * The name of the emulator's image model.
 *
 * @since 0.1.0
 * @category models
 */
export const imageModel = Models.image

/**
 * The name of the emulator's video model.
 *
 * @since 0.1.0
 * @category models
 */
export const videoModel = Models.video

/**
 * The name of the emulator's embedding model.
 *
 * @since 0.1.0
 * @category models
 */
export const embeddingModel = Models.embedding

/**
 * The name of the emulator's moderation model.
 *
 * @since 0.1.0
 * @category models
 */
export const moderationModel = Models.moderation

/**
 * The names of the emulator's chat models.
 *
 * @since 0.1.0
 * @category models
 */
export const chatModels: ReadonlyArray<string> = [Models.chatMini, Models.chat]

/**
 * The key the emulator accepts when none is given.
 *
 * @since 0.1.0
 * @category options
 */
export const defaultApiKey = "sk-emulator"

/**
 * A failure to inject into one request: an HTTP status (with optional
 * `Retry-After` / `retry-after-ms`), a delay before answering (or, with
 * `afterHeaders`, between the headers and the body), a socket reset before
 * the response or right after its headers, a body cut short, or, for
 * streamed replies, a stream cut, stalled or broken by an error event after
 * `afterChunks` events.
 *
 * @since 0.1.0
 * @category faults
 */
export type Fault = Faults.Fault

/**
 * Which requests get which faults: a `script` for the next requests in order,
 * then a seeded random `rate` of faults picked from `random`, optionally only
 * on some `paths`.
 *
 * @since 0.1.0
 * @category faults
 */
export type FaultOptions = Faults.FaultOptions

/**
 * Which web pages may call the emulator from another origin. `allowedOrigins`
 * lists origins matched exactly (`"http://localhost:5173"`) or by scheme and
 * host on any port (`"http://localhost:*"`), or is `"*"` for every origin.
 *
 * @since 0.1.0
 * @category options
 */
export interface CorsOptions {
  /** Default `loopbackOrigins`. */
  readonly allowedOrigins?: ReadonlyArray<string> | "*"
}

/**
 * The origins allowed by default: any page served from this machine, on any
 * port (`http(s)://127.0.0.1:*`, `http(s)://localhost:*`, `http(s)://[::1]:*`).
 *
 * @since 0.1.0
 * @category options
 */
export const loopbackOrigins: ReadonlyArray<string> = Cors.loopbackOrigins

/**
 * How the emulator runs: its key, port, faults, streaming pace and rate
 * limits.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /** The accepted bearer key; default `"sk-emulator"`. */
  readonly apiKey?: string
  /** Port on 127.0.0.1; default 0, a free port. */
  readonly port?: number
  readonly faults?: FaultOptions
  readonly stream?: {
    /** Characters per streamed content or arguments chunk; default 4. */
    readonly chunkSize?: number
    /** Pause between streamed events on the runtime's clock; default 0. */
    readonly interval?: Duration.Input
  }
  /**
   * CORS for web pages on other origins: preflights answered without a key,
   * `Access-Control-Allow-Origin` and the exposed headers on every response.
   * Default: on, for `loopbackOrigins`; `false` turns it off.
   */
  readonly cors?: boolean | CorsOptions
  /**
   * Answer with the bare shapes the service contract shows and nothing more:
   * no `index`, `object`, `created`, `model`, `usage`, `role` or
   * `finish_reason` on a completion, tool calls without `type`, chunks and
   * tool-call deltas without `index`, embeddings without `index`, models as
   * `{data: [{id}]}`, task statuses as `{status, video_url?}`. Tests a
   * client's tolerance (`docs/emulator.md`, Minimal replies). Default false.
   */
  readonly minimal?: boolean
  /** What one emulator holds at most, so that a long-running one keeps a flat memory. */
  readonly limits?: Limits
  /**
   * Limit mode: a budget that runs out, so that pacing can be tested. Every
   * reply carries `x-ratelimit-*` headers either way; without this they
   * advertise a budget that never runs out (`docs/emulator.md`, Rate limits).
   */
  readonly rateLimit?: RateLimit
}

/**
 * The window of limit mode: it opens at the first request, lets in
 * `requests` requests (and `tokens` tokens, a quarter of each body's bytes),
 * and answers every request past either with a 429 whose `retry-after` and
 * `retry-after-ms` say when it ends; the next request after that opens a new
 * window. Time is the emulator's clock.
 *
 * @since 1.1.0
 * @category options
 */
export interface RateLimit {
  readonly requests: number
  /** Default: no token limit (1,000,000 advertised). */
  readonly tokens?: number
  /** Default one minute. */
  readonly window?: Duration.Input
}

/**
 * What the emulator holds at most. The defaults fit a test suite and a day
 * of local development alike.
 *
 * @since 0.1.0
 * @category options
 */
export interface Limits {
  /**
   * Largest request body, in bytes; default 32 MiB (a 20 MiB image as a data
   * URI fits). A larger one is refused with 413 `request_too_large` without
   * being held: at once when its `Content-Length` says so, else once it grows
   * past the limit.
   */
  readonly bodyBytes?: number
  /** Recorded requests kept for `requests`, the oldest dropped first; default 10,000 (`Infinity` keeps them all). */
  readonly recordedRequests?: number
  /** Body bytes the recorded requests may hold together, the oldest dropped first (the latest is always kept); default 64 MiB. */
  readonly recordedBytes?: number
  /** Video tasks kept, the oldest forgotten first (its poll then gets 404 `task_not_found`); default 10,000. */
  readonly videoTasks?: number
}

/**
 * The limits used when `Options.limits` leaves one out.
 *
 * @since 0.1.0
 * @category options
 */
export const defaultLimits: Required<Limits> = {
  bodyBytes: 32 * 1024 * 1024,
  recordedRequests: 10_000,
  recordedBytes: 64 * 1024 * 1024,
  videoTasks: 10_000
}

/**
 * One request as the emulator received it. `body` is the parsed JSON, the raw
 * text when it was not JSON, or `null` when empty. Headers (and so the key)
 * are not kept. Only requests let in are recorded: those with the right key,
 * and keyless fetches of `/files/` links (`authorized: false`).
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly body: unknown
  readonly authorized: boolean
  /** The `x-request-id` the reply carried (`req_000001`, counted from the emulator's start). */
  readonly requestId: string
  /**
   * The fault drawn for this request, when one was (a stream fault drawn for
   * a request that is not streamed left its reply unchanged).
   */
  readonly fault?: Fault
}

/**
 * A running emulator.
 *
 * @since 0.1.0
 * @category services
 */
export class Emulator extends Context.Service<Emulator, {
  /** `http://127.0.0.1:PORT`, without `/v1`. */
  readonly url: string
  readonly apiKey: string
  /**
   * The latest requests let in since start or `reset` (`Limits.recordedRequests`,
   * `Limits.recordedBytes`), in order, faulted ones included. Requests refused
   * for their key or size are counted, not recorded.
   */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** Every request received since start or `reset`, refused ones included. */
  readonly requestCount: Effect.Effect<number>
  /** Resolves once at least `n` requests have been received; driven by the requests, not a clock. */
  readonly awaitRequests: (n: number) => Effect.Effect<void>
  /** TCP connections open right now. */
  readonly openConnections: Effect.Effect<number>
  /** Resolves once exactly `n` TCP connections are open; driven by the sockets, not a clock. */
  readonly awaitOpenConnections: (n: number) => Effect.Effect<void>
  /** Replaces the fault options; the script starts again from its first fault. */
  readonly setFaults: (faults: FaultOptions) => Effect.Effect<void>
  /** Clears the recorded requests and the faults. */
  readonly reset: Effect.Effect<void>
}>()("@switchboard/emulator/Emulator") {}

const count = (value: number | undefined, fallback: number) =>
  value === undefined || Number.isNaN(value) ? fallback : Math.max(0, Math.floor(value))

const limitsOf = (limits: Limits): Server.Limits => ({
  bodyBytes: count(limits.bodyBytes, defaultLimits.bodyBytes),
  recorded: {
    requests: count(limits.recordedRequests, defaultLimits.recordedRequests),
    bytes: count(limits.recordedBytes, defaultLimits.recordedBytes)
  },
  videoTasks: count(limits.videoTasks, defaultLimits.videoTasks)
})

const config = (options: Options): Server.Config => ({
  apiKey: options.apiKey ?? defaultApiKey,
  port: options.port ?? 0,
  faults: options.faults ?? {},
  chunkSize: Math.max(1, Math.floor(options.stream?.chunkSize ?? 4)),
  interval: Duration.fromInputUnsafe(options.stream?.interval ?? Duration.zero),
  cors: options.cors === false
    ? { enabled: false, allowedOrigins: [] }
    : { enabled: true, allowedOrigins: (options.cors === true ? undefined : options.cors?.allowedOrigins) ?? Cors.loopbackOrigins },
  minimal: options.minimal === true,
  limits: limitsOf(options.limits ?? {}),
  rateLimit: options.rateLimit === undefined ? undefined : {
    requests: count(options.rateLimit.requests, 0),
    tokens: count(options.rateLimit.tokens, 1_000_000),
    windowMillis: Math.max(1, Duration.toMillis(Duration.fromInputUnsafe(options.rateLimit.window ?? "1 minute")))
  }
})

/**
 * Starts an emulator for the lifetime of the layer's scope.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<Emulator, ServeError> =>
  // Fresh: a layer with inputs, built anew wherever provided (docs/decisions.md).
  EffectVersion.guard(Layer.fresh(Layer.effect(Emulator, Server.make(config(options)))))

/**
 * Runs an emulator until interrupted, after logging one line to stdout:
 * `Switchboard emulator listening on http://127.0.0.1:PORT/v1`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (options: Options = {}): Effect.Effect<never, ServeError> =>
  Effect.gen(function*() {
    const emulator = yield* Emulator
    yield* Console.log(`Switchboard emulator listening on ${emulator.url}/v1`)
    return yield* Effect.never
  }).pipe(Effect.provide(layer(options)))
