/**
 * The emulator in process and the SDK pointed at it (every test crosses real
 * HTTP), and a driver for the `TestClock` while real I/O happens.
 */
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"


/** The emulator, and the SDK configured for it, on a `RecordingClock.layer`. */
export const emulated = (options: Emulator.Options = {}) =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) => NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
  ).pipe(Layer.provideMerge(Emulator.layer(options)), Layer.provideMerge(RecordingClock.layer))

/** Requests the emulator received on a path ending with `suffix`. */
export const requestsTo = (suffix: string) =>
  Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (all) => all.filter((r) => r.path.endsWith(suffix)))

/**
 * Sleeps shorter than this are the workflow's; longer ones (request
 * timeouts, the journal's claim renewals every 40 s) are never reached.
 * Moving the clock to a renewal while a status call is in flight would shift
 * the next wait, so tests keep their waits under this.
 */
const horizon = 30_000

/** The event loop's next turn: I/O callbacks run, whatever the load (no time is waited). */
export const nextTurn = Effect.callback<void>((resume) => void setImmediate(() => resume(Effect.void)))

/**
 * Runs `fiber` to its end, moving the `TestClock` to each of its RecordingClock.sleeps in
 * turn (waits between polls, status retries) once one is pending; between
 * them real I/O runs.
 */
export const drive = <A, E>(fiber: Fiber.Fiber<A, E>): Effect.Effect<A, E> =>
  Effect.gen(function*() {
    while (true) {
      const done = fiber.pollUnsafe()
      if (done !== undefined) return yield* done
      const now = yield* Clock.currentTimeMillis
      const next = (yield* RecordingClock.sleeps).filter((at) => at - now < horizon)
      if (next.length > 0) yield* TestClock.adjust(Math.min(...next) - now)
      else yield* nextTurn
    }
  })
