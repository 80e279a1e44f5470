/**
 * Test fixtures: the emulator in process on a free port, and the SDK's Node
 * layer pointed at it, so every test crosses real HTTP.
 */
import { Emulator } from "@switchboard/emulator"
import type * as SwitchboardConfig from "@switchboard/core/SwitchboardConfig"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { NodeSwitchboard } from "../src/index.js"

/** The emulator, and the SDK configured for it (options override the defaults). */
export const emulated = (
  options: Partial<SwitchboardConfig.Options> = {},
  emulatorOptions: Emulator.Options = {}
) =>
  Layer.unwrapEffect(
    Effect.map(Emulator.Emulator, (emulator) =>
      NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, ...options }))
  ).pipe(Layer.provideMerge(Emulator.layer(emulatorOptions)))

/**
 * Waits, without touching the clock, until `effect` gives a value that passes
 * `done`: lets real I/O happen while a test runs under `TestClock`.
 */
export const waitUntil = <A, R>(effect: Effect.Effect<A, never, R>, done: (a: A) => boolean): Effect.Effect<A, never, R> =>
  Effect.flatMap(effect, (a) => (done(a) ? Effect.succeed(a) : Effect.zipRight(Effect.yieldNow(), waitUntil(effect, done))))

/** The event loop's next turn: I/O callbacks run, whatever the load (no time is waited). */
const nextTurn = Effect.async<void>((resume) => void setImmediate(() => resume(Effect.void)))

/**
 * `check` until `done` holds, letting the event loop turn between tries
 * (`waitUntil` yields to fibers only): what it waits for is real I/O of
 * another fiber, which a hot loop would starve.
 */
export const eventually = <A, E>(check: Effect.Effect<A, E>, done: (a: A) => boolean): Effect.Effect<A, E> =>
  Effect.repeat(Effect.zipLeft(check, nextTurn), { until: done })

/**
 * Waits until a retry backoff is pending and lets it pass. A backoff is a
 * sleep due within `horizon`; the per-attempt request timeout (60 s) also
 * sleeps on the clock while a request is in flight, and must not be fired.
 * Returns how long the backoff was.
 */
export const passBackoff = (horizon: Duration.DurationInput = "30 seconds") =>
  Effect.gen(function*() {
    const now = yield* TestClock.currentTimeMillis
    const limit = now + Duration.toMillis(horizon)
    const sleeps = yield* waitUntil(TestClock.sleeps(), (s) => Chunk.some(s, (t) => t > now && t <= limit))
    const due = Math.min(...Chunk.toReadonlyArray(sleeps).filter((t) => t > now && t <= limit))
    yield* TestClock.adjust(due - now)
    return due - now
  })

/** One recorder for every package's tests. */
export { recordingSpans } from "@switchboard/emulator/RecordingTracer"


/**
 * Drives a poll loop that waits `every` between calls: lets each wait pass
 * once the loop is actually sleeping (never while a request is in flight,
 * where passing time would fire a timeout), until `fiber` ends.
 */
export const driveSpaced = <A, E>(fiber: Fiber.Fiber<A, E>, every: Duration.DurationInput): Effect.Effect<A, E> =>
  Effect.gen(function*() {
    const step = Duration.toMillis(every)
    while (true) {
      const due = (yield* TestClock.currentTimeMillis) + step
      const [exit] = yield* waitUntil(
        Effect.zip(Fiber.poll(fiber), TestClock.sleeps()),
        ([exit, sleeps]) => Option.isSome(exit) || Chunk.some(sleeps, (t) => t === due)
      )
      if (Option.isSome(exit)) return yield* exit.value
      yield* TestClock.adjust(step)
    }
  })
