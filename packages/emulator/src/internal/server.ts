/**
 * The HTTP server: one node `http.Server` on 127.0.0.1 (created here so its
 * sockets can be counted), every request counted, faults applied, the key
 * checked before the body is read, the requests let in recorded, then routed.
 *
 * @internal
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type * as Duration from "effect/Duration"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Auth from "./auth.js"
import * as Cors from "./cors.js"
import * as Errors from "./errors.js"
import * as Faults from "./faults.js"
import * as Incoming from "./incoming.js"
import * as RateLimits from "./rateLimits.js"
import * as Recorder from "./recorder.js"
import * as Routes from "./routes.js"
import * as VideoTasks from "./videoTasks.js"
import * as Watch from "./watch.js"

/**
 * @internal
 */
export interface Config {
  readonly apiKey: string
  readonly port: number
  readonly faults: Faults.FaultOptions
  readonly chunkSize: number
  readonly interval: Duration.Duration
  readonly cors: Cors.Config
  readonly minimal: boolean
  readonly limits: Limits
  /** Limit mode: a window of requests and tokens that runs out; `undefined` for a budget that never does. */
  readonly rateLimit: RateLimits.Config | undefined
}

/**
 * @internal
 */
export interface Limits {
  readonly bodyBytes: number
  readonly recorded: Recorder.Limits
  readonly videoTasks: number
}

/** The routes as one handler, built once per server. */
type App = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  Errors.ApiError | HttpServerError.HttpServerError,
  Incoming.Incoming | HttpServerRequest.HttpServerRequest | Scope.Scope
>

interface State {
  readonly config: Config
  readonly app: App
  readonly recorder: Recorder.Recorder
  readonly injector: Faults.Injector
  readonly tasks: VideoTasks.Store
  readonly limiter: RateLimits.Limiter
  readonly baseUrl: string
  seq: number
}

interface Received {
  readonly seq: number
  readonly method: string
  readonly path: string
  /** The body, or the 401 or 413 the request is refused with (its body then never held). */
  readonly body: Incoming.Body | Errors.ApiError
}

const requestId = (seq: number) => `req_${String(seq).padStart(6, "0")}`

const statusFault = (fault: Extract<Faults.Fault, { readonly _tag: "Status" }>) =>
  Errors.toResponse(
    new Errors.ApiError({
      status: fault.status,
      message: Faults.statusMessage(fault.status),
      param: null,
      ...Faults.statusType(fault.status),
      headers: {
        ...(fault.retryAfter === undefined ? {} : { "retry-after": String(fault.retryAfter) }),
        ...(fault.retryAfterMs === undefined ? {} : { "retry-after-ms": String(fault.retryAfterMs) }),
        ...(fault.shouldRetry === undefined ? {} : { "x-should-retry": String(fault.shouldRetry) })
      }
    })
  )

/** Generated media links stand for the real service's public result addresses. */
const isPublic = (path: string) => path.startsWith("/files/")

/** The refusal, or the router; every failure becomes an error body. */
const answer = (state: State, received: Received, streamFault: Faults.StreamFault | undefined) => {
  const body = received.body
  if (body instanceof Errors.ApiError) return Effect.succeed(Errors.toResponse(body))
  return state.app.pipe(
    Effect.provideService(Incoming.Incoming, {
      seq: received.seq,
      body,
      baseUrl: state.baseUrl,
      streamFault,
      chunkSize: state.config.chunkSize,
      interval: state.config.interval,
      tasks: state.tasks,
      minimal: state.config.minimal
    }),
    Effect.catch((error) =>
      Effect.succeed(Errors.toResponse(
        error._tag === "ApiError" ? error : Errors.unknownUrl(received.method, received.path)
      ))
    )
  )
}

const withFault = Effect.fnUntraced(function*(state: State, received: Received, fault: Faults.Fault | undefined) {
  switch (fault?._tag) {
    case "Reset": {
      // Destroying the socket closes the response, which interrupts this fiber.
      const request = yield* HttpServerRequest.HttpServerRequest
      NodeHttpServerRequest.toIncomingMessage(request).socket?.destroy()
      return yield* Effect.never
    }
    case "Status":
      return statusFault(fault)
    case "Delay":
      // With `afterHeaders` the wait happens in `Faults.deliver`, after the headers.
      if (fault.afterHeaders !== true) yield* Effect.sleep(fault.delay)
      return yield* answer(state, received, undefined)
    default:
      return yield* answer(state, received, Faults.isStreamFault(fault) ? fault : undefined)
  }
})

const internalError = Errors.toResponse(
  new Errors.ApiError({ status: 500, message: "The emulator failed unexpectedly.", type: "server_error", param: null, code: null })
)

/**
 * The body of a request let in (a right key, or a public link), recorded; a
 * request refused for its key or size is only counted, its body never held.
 */
const admit = Effect.fnUntraced(function*(state: State, request: HttpServerRequest.HttpServerRequest, path: string, seq: number) {
  const authorized = Auth.isAuthorized(request.headers["authorization"], state.config.apiKey)
  if (!authorized && !isPublic(path)) {
    state.recorder.count()
    return { body: Auth.unauthorized(), fault: state.injector.next(path), bytes: 0 }
  }
  const text = yield* Incoming.read(request, state.config.limits.bodyBytes)
  const fault = state.injector.next(path)
  if (typeof text !== "string") {
    state.recorder.count()
    return { body: text, fault, bytes: 0 }
  }
  const body = Incoming.parseBody(text)
  const bytes = Buffer.byteLength(text)
  state.recorder.record(
    {
      method: request.method,
      path,
      body: Incoming.recordedBody(body),
      authorized,
      requestId: requestId(seq),
      ...(fault === undefined ? {} : { fault })
    },
    bytes
  )
  return { body, fault, bytes }
})

/** The 429 of limit mode: the window's reset as `retry-after` (whole seconds, rounded up) and `retry-after-ms`. */
const limited = (millis: number) =>
  Errors.toResponse(
    new Errors.ApiError({
      status: 429,
      message: "Rate limit reached for requests: the emulator's limit mode allows no more in this window.",
      type: "requests",
      param: null,
      code: "rate_limit_exceeded",
      headers: { "retry-after": String(Math.ceil(millis / 1000)), "retry-after-ms": String(Math.ceil(millis)) }
    })
  )

/** The rate-limit headers of a request let in, and the 429 when limit mode has run out. */
const limit = (state: State, path: string, body: Incoming.Body | Errors.ApiError, bytes: number) =>
  Effect.map(Clock.currentTimeMillis, (now) =>
    body instanceof Errors.ApiError || !path.startsWith("/v1/") ? undefined : state.limiter.admit(now, bytes))

const handle = (state: State) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    // A CORS preflight needs no key, is not recorded and uses up no fault.
    if (request.method === "OPTIONS" && state.config.cors.enabled) return Cors.preflight(state.config.cors, request.headers)
    const seq = ++state.seq
    const path = new URL(request.url, "http://127.0.0.1").pathname
    const { body, bytes, fault } = yield* admit(state, request, path, seq)
    const received: Received = { seq, method: request.method, path, body }
    const verdict = yield* limit(state, path, body, bytes)
    const response = verdict?.refusedFor !== undefined ? limited(verdict.refusedFor) : yield* withFault(state, received, fault).pipe(
      Effect.catchDefect((defect) =>
        Effect.as(Effect.logError("emulator handler failed", defect instanceof Error ? defect.message : "defect"), internalError)
      )
    )
    const headed = HttpServerResponse.setHeaders(response, { ...verdict?.headers, "x-request-id": requestId(seq) })
    const final = Cors.apply(state.config.cors, request.headers["origin"], headed)
    return yield* Faults.deliver(verdict?.refusedFor !== undefined ? undefined : fault, final)
  })

/** Connections the kernel completes and holds for the server while it is busy. */
const backlog = 4_096

const listen = Effect.fnUntraced(function*(config: Config) {
  const connections = Watch.make(0)
  const server = Http.createServer()
  server.on("connection", (socket) => {
    connections.update((n) => n + 1)
    socket.once("close", () => connections.update((n) => n - 1))
  })
  // Node's default backlog (511) drops the SYNs of a client that opens more
  // connections at once than that, and each waits a second or more to retry
  // (a load of 2,000 agent runs, the bench's agent-load figure). The kernel
  // caps it at net.core.somaxconn.
  const httpServer = yield* NodeHttpServer.make(() => server, { host: "127.0.0.1", port: config.port, backlog })
  const { port } = server.address() as Net.AddressInfo
  return { server, httpServer, connections, baseUrl: `http://127.0.0.1:${port}` }
})

/** Binds, serves, and on scope end drops open connections so closing never waits on a stalled stream. */
export const make = Effect.fnUntraced(function*(config: Config) {
  const { baseUrl, connections, httpServer, server } = yield* listen(config)
  const state: State = {
    config,
    app: yield* HttpRouter.toHttpEffect(Routes.layer),
    recorder: Recorder.make(config.limits.recorded),
    injector: Faults.makeInjector(config.faults),
    tasks: VideoTasks.makeStore(config.limits.videoTasks),
    limiter: RateLimits.make(config.rateLimit),
    baseUrl,
    seq: 0
  }
  // Effect 4 runs a request's fiber uninterruptibly outside router routes; a
  // client that goes away must still end a delay, a reset or a stall.
  yield* httpServer.serve(Effect.interruptible(handle(state)))
  yield* Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections()))
  return {
    url: baseUrl,
    apiKey: config.apiKey,
    requests: Effect.sync(() => state.recorder.list()),
    requestCount: Effect.sync(() => state.recorder.received()),
    awaitRequests: (n: number) => state.recorder.awaitReceived(n),
    openConnections: Effect.sync(() => connections.get()),
    awaitOpenConnections: (n: number) => connections.await((open) => open === n),
    setFaults: (faults: Faults.FaultOptions) => Effect.sync(() => state.injector.set(faults)),
    reset: Effect.sync(() => {
      state.recorder.clear()
      state.injector.set({})
      state.limiter.reset()
    })
  }
})
