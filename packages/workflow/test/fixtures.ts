/**
 * The emulator in process and the SDK pointed at it (every test crosses real
 * HTTP), and a driver for the `TestClock` while real I/O happens.
 */
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"

/** Pending sleeps' wake-up times, kept by `recordingClock`. */
const pending = new WeakMap<Clock.Clock, Array<number>>()

/**
 * The clock in place (a `TestClock` in `it.effect`), recording when each
 * pending sleep wakes: Effect 4's `TestClock` keeps its sleeps to itself,
 * and `drive` must know a workflow's wait is pending before it moves time.
 */
export const recordingClock: Layer.Layer<never> = Layer.effect(
  Clock.Clock,
  Clock.clockWith((inner) => {
    const wakes: Array<number> = []
    const test = inner as TestClock.TestClock
    const clock: TestClock.TestClock = {
      currentTimeMillisUnsafe: () => inner.currentTimeMillisUnsafe(),
      currentTimeMillis: inner.currentTimeMillis,
      currentTimeNanosUnsafe: () => inner.currentTimeNanosUnsafe(),
      currentTimeNanos: inner.currentTimeNanos,
      monotonicTimeNanosUnsafe: () => inner.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: inner.monotonicTimeNanos,
      sleep: (duration) =>
        Effect.suspend(() => {
          const wake = inner.currentTimeMillisUnsafe() + Duration.toMillis(duration)
          wakes.push(wake)
          return Effect.ensuring(inner.sleep(duration), Effect.sync(() => wakes.splice(wakes.indexOf(wake), 1)))
        }),
      adjust: (duration) => test.adjust(duration),
      setTime: (timestamp) => test.setTime(timestamp),
      withLive: (effect) => test.withLive(effect)
    }
    pending.set(clock, wakes)
    return Effect.succeed(clock)
  })
) as Layer.Layer<never>

/** When each pending sleep wakes (under `recordingClock`; else none). */
export const sleeps: Effect.Effect<ReadonlyArray<number>> = Clock.clockWith((clock) =>
  Effect.sync(() => [...(pending.get(clock) ?? [])])
)

/** The emulator, and the SDK configured for it, on a `recordingClock`. */
export const emulated = (options: Emulator.Options = {}) =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) => NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
  ).pipe(Layer.provideMerge(Emulator.layer(options)), Layer.provideMerge(recordingClock))

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
 * Runs `fiber` to its end, moving the `TestClock` to each of its sleeps in
 * turn (waits between polls, status retries) once one is pending; between
 * them real I/O runs.
 */
export const drive = <A, E>(fiber: Fiber.Fiber<A, E>): Effect.Effect<A, E> =>
  Effect.gen(function*() {
    while (true) {
      const done = fiber.pollUnsafe()
      if (done !== undefined) return yield* done
      const now = yield* Clock.currentTimeMillis
      const next = (yield* sleeps).filter((at) => at - now < horizon)
      if (next.length > 0) yield* TestClock.adjust(Math.min(...next) - now)
      else yield* nextTurn
    }
  })
