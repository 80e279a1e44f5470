/**
 * The requests the emulator remembers for `requests`: every request is
 * counted, but only those let in are recorded, and only the latest of them,
 * within a count and a byte budget, so a long-running emulator's memory
 * stays flat (issue 26).
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type { RecordedRequest } from "../Emulator.js"
import * as Watch from "./watch.js"

/**
 * @internal
 */
export interface Limits {
  /** Recorded requests kept. */
  readonly requests: number
  /** Body bytes the recorded requests may hold together; the latest is kept whatever its size. */
  readonly bytes: number
}

/**
 * @internal
 */
export interface Recorder {
  /** Counts a request that is not recorded (refused for its key or size). */
  readonly count: () => void
  /** Counts and records a request whose body had `bytes` bytes. */
  readonly record: (request: RecordedRequest, bytes: number) => void
  readonly list: () => ReadonlyArray<RecordedRequest>
  readonly received: () => number
  readonly awaitReceived: (n: number) => Effect.Effect<void>
  readonly clear: () => void
}

export const make = (limits: Limits): Recorder => {
  const received = Watch.make(0)
  let kept: Array<{ readonly request: RecordedRequest; readonly bytes: number }> = []
  let bytes = 0
  return {
    count: () => received.update((n) => n + 1),
    record: (request, size) => {
      kept.push({ request, bytes: size })
      bytes += size
      while (kept.length > limits.requests || (bytes > limits.bytes && kept.length > 1)) bytes -= kept.shift()!.bytes
      received.update((n) => n + 1)
    },
    list: () => kept.map((entry) => entry.request),
    received: () => received.get(),
    awaitReceived: (n) => received.await((count) => count >= n),
    clear: () => {
      kept = []
      bytes = 0
      received.update(() => 0)
    }
  }
}
