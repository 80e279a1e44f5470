/**
 * Test fixtures: the emulator in process on a free port, and the SDK's Node
 * layer pointed at it, so every test crosses real HTTP.
 */
import { Emulator } from "@switchboard/emulator"
import type * as SwitchboardConfig from "@switchboard/core/SwitchboardConfig"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import { NodeSwitchboard } from "../src/index.js"

/** Pending sleeps' wake-up times, kept by `recordingClock`. */
const pending = new WeakMap<Clock.Clock, Array<number>>()

/**
 * The clock in place (a `TestClock` in `it.effect`), recording when each
 * pending sleep wakes: Effect 4's `TestClock` keeps its sleeps to itself, and
 * `passBackoff` and `driveSpaced` must know a backoff is pending before they
 * move time (moving it while a request is in flight would fire its timeout).
 */
export const recordingClock: Layer.Layer<never> = Layer.effect(
  Clock.Clock,
  Clock.clockWith((inner) => {
    const wakes: Array<number> = []
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
          return Effect.ensuring(
            inner.sleep(duration),
            Effect.sync(() => wakes.splice(wakes.indexOf(wake), 1))
          )
        }),
      adjust: (duration) => (inner as TestClock.TestClock).adjust(duration),
      setTime: (timestamp) => (inner as TestClock.TestClock).setTime(timestamp),
      withLive: (effect) => (inner as TestClock.TestClock).withLive(effect)
    }
    pending.set(clock, wakes)
    return Effect.succeed(clock)
  })
) as Layer.Layer<never>

/** When each pending sleep wakes, earliest first (under `recordingClock`; else none). */
export const sleeps: Effect.Effect<ReadonlyArray<number>> = Clock.clockWith((clock) =>
  Effect.sync(() => [...(pending.get(clock) ?? [])].sort((a, b) => a - b))
)

/** The emulator, and the SDK configured for it (options override the defaults), on a `recordingClock`. */
export const emulated = (
  options: Partial<SwitchboardConfig.Options> = {},
  emulatorOptions: Emulator.Options = {}
) =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) =>
      NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, ...options }))
  ).pipe(Layer.provideMerge(Emulator.layer(emulatorOptions)), Layer.provideMerge(recordingClock))

/**
 * Waits, without touching the clock, until `effect` gives a value that passes
 * `done`: lets real I/O happen while a test runs under `TestClock`.
 */
export const waitUntil = <A, R>(effect: Effect.Effect<A, never, R>, done: (a: A) => boolean): Effect.Effect<A, never, R> =>
  Effect.flatMap(effect, (a) => (done(a) ? Effect.succeed(a) : Effect.andThen(Effect.yieldNow, waitUntil(effect, done))))

/** The event loop's next turn: I/O callbacks run, whatever the load (no time is waited). */
const nextTurn = Effect.callback<void>((resume) => void setImmediate(() => resume(Effect.void)))

/**
 * `check` until `done` holds, letting the event loop turn between tries
 * (`waitUntil` yields to fibers only): what it waits for is real I/O of
 * another fiber, which a hot loop would starve.
 */
export const eventually = <A, E>(check: Effect.Effect<A, E>, done: (a: A) => boolean): Effect.Effect<A, E> =>
  Effect.repeat(Effect.tap(check, nextTurn), { until: done })

/**
 * Waits until a retry backoff is pending and lets it pass. A backoff is a
 * sleep due within `horizon`; the per-attempt request timeout (60 s) also
 * sleeps on the clock while a request is in flight, and must not be fired.
 * Returns how long the backoff was.
 */
export const passBackoff = (horizon: Duration.Input = "30 seconds") =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const limit = now + Duration.toMillis(horizon)
    const due = yield* waitUntil(sleeps, (s) => s.some((t) => t > now && t <= limit))
    const next = Math.min(...due.filter((t) => t > now && t <= limit))
    yield* TestClock.adjust(next - now)
    return next - now
  })

/** One recorder for every package's tests. */
export { recordingSpans } from "@switchboard/emulator/RecordingTracer"

/**
 * Drives a poll loop that waits `every` between calls: lets each wait pass
 * once the loop is actually sleeping (never while a request is in flight,
 * where passing time would fire a timeout), until `fiber` ends.
 */
export const driveSpaced = <A, E>(fiber: Fiber.Fiber<A, E>, every: Duration.Input): Effect.Effect<A, E> =>
  Effect.gen(function*() {
    const step = Duration.toMillis(every)
    while (true) {
      const due = (yield* Clock.currentTimeMillis) + step
      const [exit] = yield* waitUntil(
        Effect.zip(Effect.sync(() => fiber.pollUnsafe()), sleeps),
        ([exit, wakes]) => exit !== undefined || wakes.includes(due)
      )
      if (exit !== undefined) return yield* exit
      yield* TestClock.adjust(step)
    }
  })
