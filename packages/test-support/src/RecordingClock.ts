/**
 * The clock in place (a `TestClock` in `it.effect`), recording when each
 * pending sleep wakes: Effect 4's `TestClock` keeps its sleeps to itself, and
 * a test must know a backoff, a limit's timer or a poll is pending before it
 * moves time (moving it while a request is in flight would fire its timeout).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as TestClock from "effect/testing/TestClock"

/** Pending sleeps' wake-up times, per recording clock. */
const pending = new WeakMap<Clock.Clock, Array<number>>()

/** The clock in place, wrapped so that `sleeps` sees its pending sleeps; it must be a `TestClock`. */
export const layer: Layer.Layer<never> = Layer.effect(
  Clock.Clock,
  Clock.clockWith((inner) => {
    const test = inner as TestClock.TestClock
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

/** When each pending sleep wakes, earliest first (under `layer`; else none). */
export const sleeps: Effect.Effect<ReadonlyArray<number>> = Clock.clockWith((clock) =>
  Effect.sync(() => [...(pending.get(clock) ?? [])].sort((a, b) => a - b))
)
