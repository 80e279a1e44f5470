/**
 * Fault injection: a script of faults for the next requests (deterministic,
 * for retry tests), then an optional seeded random share of faulted requests.
 * Faults that break the wire itself (`ResetAfterHeaders`, `TruncateBody`,
 * `Delay` with `afterHeaders`) are written here, straight to node's response.
 *
 * @internal
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import { mulberry32 } from "./hash.js"

/**
 * A failure to inject into one request.
 *
 * @since 0.1.0
 * @category faults
 */
export type Fault =
  | {
    readonly _tag: "Status"
    readonly status: number
    /** Seconds; sets `Retry-After`. */
    readonly retryAfter?: number
    /** Milliseconds; sets `retry-after-ms`. */
    readonly retryAfterMs?: number
    /** Sets `x-should-retry`: the service's own word on whether to try again. */
    readonly shouldRetry?: boolean
  }
  | {
    readonly _tag: "Delay"
    readonly delay: Duration.Input
    /**
     * Send the status and headers at once and hold back only the body (the
     * first byte of a stream); default false: nothing is sent until `delay`.
     */
    readonly afterHeaders?: boolean
  }
  | { readonly _tag: "Reset" }
  /** The status and headers of the real reply are sent, then the connection is closed: no body. */
  | { readonly _tag: "ResetAfterHeaders" }
  | {
    readonly _tag: "TruncateBody"
    /** Share of the reply's bytes sent, 0..1; default 0.5. At least one byte is held back. */
    readonly keep?: number
    /**
     * false (default): `Content-Length` is the truncated length, so the
     * response looks complete and the connection stays usable. true:
     * `Content-Length` announces the whole body and the connection is closed
     * mid-body.
     */
    readonly closeConnection?: boolean
  }
  | { readonly _tag: "CutStream"; readonly afterChunks: number }
  | { readonly _tag: "StallStream"; readonly afterChunks: number }
  | { readonly _tag: "ErrorEvent"; readonly afterChunks: number; readonly message: string }

/**
 * Which requests get which faults.
 *
 * @since 0.1.0
 * @category faults
 */
export interface FaultOptions {
  /** Applied to the next requests, one each, in order. */
  readonly script?: ReadonlyArray<Fault>
  /** Only requests to these paths (e.g. `/v1/chat/completions`) get faults; default all. */
  readonly paths?: ReadonlyArray<string>
  /** Share of requests (0..1) faulted at random once the script is used up. */
  readonly rate?: number
  /** The faults `rate` picks from. */
  readonly random?: ReadonlyArray<Fault>
  /** Seed of the PRNG behind `rate`: the same seed gives the same faults. */
  readonly seed?: number
}

/** A fault that only changes a streamed response. */
export type StreamFault = Extract<Fault, { readonly afterChunks: number }>

export const isStreamFault = (fault: Fault | undefined): fault is StreamFault =>
  fault !== undefined && "afterChunks" in fault

/**
 * @internal
 */
export interface Injector {
  readonly set: (options: FaultOptions) => void
  /** The fault for the next request to `path`, consuming it. */
  readonly next: (path: string) => Fault | undefined
}

export const makeInjector = (initial: FaultOptions): Injector => {
  let options = initial
  let used = 0
  let random = mulberry32(initial.seed ?? 0)
  const set = (next: FaultOptions) => {
    options = next
    used = 0
    random = mulberry32(next.seed ?? 0)
  }
  const next = (path: string): Fault | undefined => {
    if (options.paths !== undefined && !options.paths.includes(path)) return undefined
    const script = options.script ?? []
    if (used < script.length) return script[used++]
    const pool = options.random ?? []
    if ((options.rate ?? 0) <= 0 || pool.length === 0 || random() >= (options.rate ?? 0)) return undefined
    return pool[Math.floor(random() * pool.length)]
  }
  return { set, next }
}

export const statusMessage = (status: number): string => `Injected fault: ${status}`

export const statusType = (status: number): { readonly type: string; readonly code: string | null } =>
  status === 429
    ? { type: "rate_limit_error", code: "rate_limit_exceeded" }
    : status >= 500
    ? { type: "server_error", code: "server_error" }
    : { type: "invalid_request_error", code: null }

/** Whether `fault` is written by `deliver` rather than by the platform. */
const isWireFault = (fault: Fault | undefined): boolean =>
  fault?._tag === "ResetAfterHeaders" || fault?._tag === "TruncateBody" ||
  (fault?._tag === "Delay" && fault.afterHeaders === true)

const bytesOf = (body: HttpServerResponse.HttpServerResponse["body"]): Effect.Effect<Uint8Array | undefined> => {
  switch (body._tag) {
    case "Uint8Array":
      return Effect.succeed(body.body)
    case "Stream":
      return Effect.map(Stream.runCollect(Stream.orDie(body.stream)), (parts) => Buffer.concat(parts))
    case "Raw":
      return Effect.succeed(typeof body.body === "string" ? new TextEncoder().encode(body.body) : undefined)
    default:
      return Effect.succeed(new Uint8Array(0))
  }
}

const headersOf = (response: HttpServerResponse.HttpServerResponse, length: number | undefined) => {
  const contentType = "contentType" in response.body ? response.body.contentType : undefined
  const headers: Record<string, string> = { ...response.headers }
  delete headers["content-length"]
  if (contentType !== undefined && headers["content-type"] === undefined) headers["content-type"] = contentType
  if (length !== undefined) headers["content-length"] = String(length)
  return headers
}

/** Writes `bytes` (or nothing) and resolves once they are handed to the socket. */
const write = (node: Http.ServerResponse, bytes: Uint8Array) =>
  Effect.callback<void>((resume) => {
    if (bytes.length === 0) {
      node.flushHeaders()
      resume(Effect.void)
    } else {
      node.write(bytes, () => resume(Effect.void))
    }
  })

/**
 * Closes the connection once what was written is sent; closing the response
 * interrupts the handler's fiber, hence `never`.
 */
const drop = (node: Http.ServerResponse) =>
  Effect.andThen(Effect.sync(() => node.socket?.destroySoon()), Effect.never)

const end = (node: Http.ServerResponse, bytes: Uint8Array) =>
  Effect.callback<void>((resume) => {
    node.end(bytes, () => resume(Effect.void))
  })

/**
 * Sends `response` as `fault` has it: untouched for most faults (the
 * platform writes it), or written here for the wire faults. A response
 * written here is ended (or its connection dropped) before this returns, and
 * the platform leaves an ended response alone.
 */
export const deliver = (
  fault: Fault | undefined,
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> => {
  if (fault === undefined || !isWireFault(fault)) return Effect.succeed(response)
  return Effect.gen(function*() {
    // The emulator's server is node:http, never HTTP/2.
    const node = NodeHttpServerRequest.toServerResponse(yield* HttpServerRequest.HttpServerRequest) as Http.ServerResponse
    const streamed = response.body._tag === "Stream"
    switch (fault._tag) {
      case "ResetAfterHeaders": {
        const bytes = streamed ? undefined : yield* bytesOf(response.body)
        node.writeHead(response.status, headersOf(response, bytes?.length))
        yield* write(node, new Uint8Array(0))
        return yield* drop(node)
      }
      case "TruncateBody": {
        const bytes = (yield* bytesOf(response.body)) ?? new Uint8Array(0)
        const keep = Math.min(Math.max(fault.keep ?? 0.5, 0), 1)
        const kept = bytes.subarray(0, Math.max(0, Math.min(Math.floor(bytes.length * keep), bytes.length - 1)))
        if (fault.closeConnection === true) {
          node.writeHead(response.status, headersOf(response, streamed ? undefined : bytes.length))
          yield* write(node, kept)
          return yield* drop(node)
        }
        node.writeHead(response.status, headersOf(response, kept.length))
        yield* end(node, kept)
        return response
      }
      case "Delay": {
        if (streamed && response.body._tag === "Stream") {
          node.writeHead(response.status, headersOf(response, undefined))
          yield* write(node, new Uint8Array(0))
          yield* Effect.sleep(fault.delay)
          yield* Stream.runForEach(Stream.orDie(response.body.stream), (bytes) => write(node, bytes))
          yield* end(node, new Uint8Array(0))
          return response
        }
        const bytes = (yield* bytesOf(response.body)) ?? new Uint8Array(0)
        node.writeHead(response.status, headersOf(response, bytes.length))
        yield* write(node, new Uint8Array(0))
        yield* Effect.sleep(fault.delay)
        yield* end(node, bytes)
        return response
      }
      default:
        return response
    }
  })
}
