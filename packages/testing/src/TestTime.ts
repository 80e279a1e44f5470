/**
 * Time for a program under test that sleeps on Effect's `Clock`: a retried
 * 503's backoff, a `retry-after`, a scripted delay, a paced replayed stream.
 * Under `it.effect` the clock is a `TestClock`, which moves only when told;
 * a program that sleeps and is never told waits forever, and the test hangs
 * with Effect's generic warning.
 *
 * `run(effect)` runs the program and, each time every fiber of it is waiting
 * (no task of it is queued) and one sleeps, moves the `TestClock` to the
 * earliest wake-up: what real time would do, in no time. It counts the
 * program's queued tasks by a scheduler of its own around the one in place,
 * so it never moves time while the program still works. With a live clock
 * (`it.live`), the program runs as it is.
 *
 * Only for programs whose waits are all on the clock: a script
 * (`ScriptedModel`) or a replay (`Cassette`). A program waiting on real I/O
 * (the emulator) would see time jump while it waits; drive its clock by hand.
 *
 * @since 1.0.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Scheduler from "effect/Scheduler"
import type * as TestClock from "effect/testing/TestClock"

const isTestClock = (clock: Clock.Clock): clock is TestClock.TestClock => "adjust" in clock

/** What `slept` reads: the durations (ms) each run's program asked to sleep. */
const sleptBy = new WeakMap<Clock.Clock, Array<number>>()

/**
 * Runs `effect`, moving a `TestClock` to each sleep's wake-up once the
 * program is waiting on it; `effect`'s result.
 *
 * @since 1.0.0
 * @category combinators
 */
export const run = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((parent) => {
    const inner = parent.getRef(Clock.Clock)
    if (!isTestClock(inner)) return effect
    const outer = parent.getRef(Scheduler.Scheduler)
    let queued = 0
    const wakes: Array<number> = []
    const slept: Array<number> = []
    let changed: (() => void) | undefined
    const scheduler: Scheduler.Scheduler = {
      executionMode: outer.executionMode,
      shouldYield: (fiber) => outer.shouldYield(fiber),
      makeDispatcher: () => {
        const dispatcher = outer.makeDispatcher()
        return {
          scheduleTask: (task, priority) => {
            queued++
            dispatcher.scheduleTask(() => {
              try {
                task()
              } finally {
                queued--
              }
            }, priority)
          },
          flush: () => dispatcher.flush()
        }
      }
    }
    const clock: TestClock.TestClock = {
      currentTimeMillisUnsafe: () => inner.currentTimeMillisUnsafe(),
      currentTimeMillis: inner.currentTimeMillis,
      currentTimeNanosUnsafe: () => inner.currentTimeNanosUnsafe(),
      currentTimeNanos: inner.currentTimeNanos,
      monotonicTimeNanosUnsafe: () => inner.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: inner.monotonicTimeNanos,
      sleep: (duration) =>
        Effect.suspend(() => {
          const millis = Duration.toMillis(duration)
          const wake = inner.currentTimeMillisUnsafe() + millis
          wakes.push(wake)
          slept.push(millis)
          changed?.()
          return Effect.ensuring(inner.sleep(duration), Effect.sync(() => void wakes.splice(wakes.indexOf(wake), 1)))
        }),
      adjust: (duration) => inner.adjust(duration),
      setTime: (timestamp) => inner.setTime(timestamp),
      withLive: (live) => inner.withLive(live)
    }
    sleptBy.set(clock, slept)

    /** Resumes when the program ends or sleeps again. */
    const nextChange = (fiber: Fiber.Fiber<A, E>) =>
      Effect.callback<void>((resume) => {
        const done = () => resume(Effect.void)
        changed = done
        const remove = fiber.addObserver(done)
        return Effect.sync(() => {
          changed = undefined
          remove()
        })
      })

    const drive = (fiber: Fiber.Fiber<A, E>): Effect.Effect<A, E> =>
      Effect.gen(function*() {
        while (true) {
          yield* Effect.yieldNow
          while (queued > 0) yield* Effect.yieldNow
          if (fiber.pollUnsafe() !== undefined) return yield* Fiber.join(fiber)
          if (wakes.length === 0) {
            yield* nextChange(fiber)
            continue
          }
          const earliest = Math.min(...wakes)
          yield* inner.adjust(Math.max(0, earliest - inner.currentTimeMillisUnsafe()))
        }
      })

    const forked = Effect.forkChild(effect, { startImmediately: false }).pipe(
      Effect.provideService(Clock.Clock, clock),
      Effect.provideService(Scheduler.Scheduler, scheduler)
    )
    return Effect.flatMap(forked, (fiber) => Effect.onInterrupt(drive(fiber), () => Fiber.interrupt(fiber)))
  })

/**
 * The sleeps (in milliseconds) the program of the enclosing `run` asked
 * for, in order: a retry's backoff can be checked without a stopwatch.
 *
 * @since 1.0.0
 * @category accessors
 */
export const slept: Effect.Effect<ReadonlyArray<number>> = Clock.clockWith((clock) =>
  Effect.sync(() => [...(sleptBy.get(clock) ?? [])])
)
