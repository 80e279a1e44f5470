/**
 * The emulator in process and the SDK pointed at it (every test crosses real
 * HTTP), and a driver for the `TestClock` while real I/O happens.
 */
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"

/** The emulator, and the SDK configured for it. */
export const emulated = (options: Emulator.Options = {}) =>
  Layer.unwrapEffect(
    Effect.map(Emulator.Emulator, (emulator) => NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
  ).pipe(Layer.provideMerge(Emulator.layer(options)))

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

/**
 * Runs `fiber` to its end, moving the `TestClock` to each of its sleeps in
 * turn (waits between polls, status retries) once one is pending; between
 * them real I/O runs.
 */
export const drive = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Effect.Effect<A, E> =>
  Effect.gen(function*() {
    while (true) {
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) return yield* done.value
      const now = yield* TestClock.currentTimeMillis
      const next = Chunk.filter(yield* TestClock.sleeps(), (at) => at - now < horizon)
      if (Chunk.isNonEmpty(next)) yield* TestClock.adjust(Math.min(...next) - now)
      else yield* Effect.yieldNow()
    }
  })
