/**
 * Fault injection: a script of faults for the next requests (deterministic,
 * for retry tests), then an optional seeded random share of faulted requests.
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
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
  }
  | { readonly _tag: "Delay"; readonly delay: Duration.DurationInput }
  | { readonly _tag: "Reset" }
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
