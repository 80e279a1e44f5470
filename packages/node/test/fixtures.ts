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
import * as RecordingClock from "@switchboard/test-support/RecordingClock"


/** The emulator, and the SDK configured for it (options override the defaults), on a `RecordingClock.layer`. */
export const emulated = (
  options: Partial<SwitchboardConfig.Options> = {},
  emulatorOptions: Emulator.Options = {}
) =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) =>
      NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, ...options }))
  ).pipe(Layer.provideMerge(Emulator.layer(emulatorOptions)), Layer.provideMerge(RecordingClock.layer))

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
 * RecordingClock.sleeps on the clock while a request is in flight, and must not be fired.
 * Returns how long the backoff was.
 */
export const passBackoff = (horizon: Duration.Input = "30 seconds") =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const limit = now + Duration.toMillis(horizon)
    const due = yield* waitUntil(RecordingClock.sleeps, (s) => s.some((t) => t > now && t <= limit))
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
        Effect.zip(Effect.sync(() => fiber.pollUnsafe()), RecordingClock.sleeps),
        ([exit, wakes]) => exit !== undefined || wakes.includes(due)
      )
      if (exit !== undefined) return yield* exit
      yield* TestClock.adjust(step)
    }
  })
