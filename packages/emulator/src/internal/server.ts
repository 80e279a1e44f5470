/**
 * The HTTP server: one node `http.Server` on 127.0.0.1 (created here so its
 * sockets can be counted), every request recorded, faults applied, the key
 * checked, then routed.
 *
 * @internal
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import type { RecordedRequest } from "../Emulator.js"
import * as Auth from "./auth.js"
import * as Cors from "./cors.js"
import * as Errors from "./errors.js"
import * as Faults from "./faults.js"
import * as Incoming from "./incoming.js"
import { router } from "./routes.js"
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
}

interface State {
  readonly config: Config
  readonly requests: Watch.Watch<ReadonlyArray<RecordedRequest>>
  readonly injector: Faults.Injector
  readonly tasks: VideoTasks.Store
  readonly baseUrl: string
  seq: number
}

interface Received {
  readonly seq: number
  readonly method: string
  readonly path: string
  readonly body: Incoming.Body
  readonly authorized: boolean
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
        ...(fault.retryAfterMs === undefined ? {} : { "retry-after-ms": String(fault.retryAfterMs) })
      }
    })
  )

/** Generated media links stand for the real service's public result addresses. */
const isPublic = (path: string) => path.startsWith("/files/")

/** Auth, then the router; every failure becomes an error body. */
const answer = (state: State, received: Received, streamFault: Faults.StreamFault | undefined) => {
  if (!received.authorized && !isPublic(received.path)) return Effect.succeed(Errors.toResponse(Auth.unauthorized()))
  return router.pipe(
    Effect.provideService(Incoming.Incoming, {
      seq: received.seq,
      body: received.body,
      baseUrl: state.baseUrl,
      streamFault,
      chunkSize: state.config.chunkSize,
      interval: state.config.interval,
      tasks: state.tasks,
      minimal: state.config.minimal
    }),
    Effect.catchAll((error) =>
      Effect.succeed(Errors.toResponse(
        error._tag === "ApiError" ? error : Errors.unknownUrl(received.method, received.path)
      ))
    )
  )
}

const withFault = (state: State, received: Received, fault: Faults.Fault | undefined) =>
  Effect.gen(function*() {
    switch (fault?._tag) {
      case "Reset": {
        // Destroying the socket closes the response, which interrupts this fiber.
        const request = yield* HttpServerRequest.HttpServerRequest
        NodeHttpServerRequest.toIncomingMessage(request).socket.destroy()
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

const handle = (state: State) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    // A CORS preflight needs no key, is not recorded and uses up no fault.
    if (request.method === "OPTIONS" && state.config.cors.enabled) return Cors.preflight(state.config.cors, request.headers)
    const seq = ++state.seq
    const path = new URL(request.url, "http://127.0.0.1").pathname
    const body = Incoming.parseBody(yield* Effect.orElseSucceed(request.text, () => ""))
    const authorized = Auth.isAuthorized(request.headers["authorization"], state.config.apiKey)
    const received: Received = { seq, method: request.method, path, body, authorized }
    const fault = state.injector.next(path)
    state.requests.update((all) => [
      ...all,
      { method: request.method, path, body: Incoming.recordedBody(body), authorized, ...(fault === undefined ? {} : { fault }) }
    ])
    const response = yield* withFault(state, received, fault).pipe(
      Effect.catchAllDefect((defect) =>
        Effect.as(Effect.logError("emulator handler failed", defect instanceof Error ? defect.message : "defect"), internalError)
      )
    )
    const final = Cors.apply(state.config.cors, request.headers["origin"], HttpServerResponse.setHeader(response, "x-request-id", requestId(seq)))
    return yield* Faults.deliver(fault, final)
  })

const listen = (config: Config) =>
  Effect.gen(function*() {
    const connections = Watch.make(0)
    const server = Http.createServer()
    server.on("connection", (socket) => {
      connections.update((n) => n + 1)
      socket.once("close", () => connections.update((n) => n - 1))
    })
    const httpServer = yield* NodeHttpServer.make(() => server, { host: "127.0.0.1", port: config.port })
    const address = httpServer.address
    const port = address._tag === "TcpAddress" ? address.port : config.port
    return { server, httpServer, connections, baseUrl: `http://127.0.0.1:${port}` }
  })

/** Binds, serves, and on scope end drops open connections so closing never waits on a stalled stream. */
export const make = (config: Config) =>
  Effect.gen(function*() {
    const { baseUrl, connections, httpServer, server } = yield* listen(config)
    const state: State = {
      config,
      requests: Watch.make<ReadonlyArray<RecordedRequest>>([]),
      injector: Faults.makeInjector(config.faults),
      tasks: VideoTasks.makeStore(),
      baseUrl,
      seq: 0
    }
    yield* httpServer.serve(handle(state))
    yield* Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections()))
    return {
      url: baseUrl,
      apiKey: config.apiKey,
      requests: Effect.sync(() => state.requests.get()),
      requestCount: Effect.sync(() => state.requests.get().length),
      awaitRequests: (n: number) => state.requests.await((all) => all.length >= n),
      openConnections: Effect.sync(() => connections.get()),
      awaitOpenConnections: (n: number) => connections.await((open) => open === n),
      setFaults: (faults: Faults.FaultOptions) => Effect.sync(() => state.injector.set(faults)),
      reset: Effect.sync(() => {
        state.requests.update(() => [])
        state.injector.set({})
      })
    }
  })
