/**
 * The emulator in process on a free port, the SDK's Node layer pointed at
 * it, and the provider layers on top: every test is an `effect/ai` program
 * that crosses real HTTP.
 */
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as AiTool from "effect/ai/Tool"
import * as AiToolkit from "effect/ai/Toolkit"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as TestClock from "effect/testing/TestClock"

/** Pending sleeps' durations, kept by `recordingClock`. */
const pending = new WeakMap<Clock.Clock, Array<number>>()

/**
 * The clock in place (a `TestClock` in `it.effect`), recording each pending
 * sleep: Effect 4's `TestClock` keeps its sleeps to itself, and a test must
 * know a retry's wait has begun before it moves time.
 */
const recordingClock: Layer.Layer<never> = Layer.effect(
  Clock.Clock,
  Clock.clockWith((inner) => {
    const waits: Array<number> = []
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
          const millis = Duration.toMillis(duration)
          waits.push(millis)
          return Effect.ensuring(inner.sleep(duration), Effect.sync(() => waits.splice(waits.indexOf(millis), 1)))
        }),
      adjust: (duration) => test.adjust(duration),
      setTime: (timestamp) => test.setTime(timestamp),
      withLive: (effect) => test.withLive(effect)
    }
    pending.set(clock, waits)
    return Effect.succeed(clock)
  })
) as Layer.Layer<never>

/** The durations of the sleeps pending now (under `emulated`'s clock). */
export const sleeps: Effect.Effect<ReadonlyArray<number>> = Clock.clockWith((clock) =>
  Effect.sync(() => [...(pending.get(clock) ?? [])])
)

/** The event loop's next turn: I/O callbacks run (no time is waited). */
const nextTurn = Effect.callback<void>((resume) => void setImmediate(() => resume(Effect.void)))

/** Waits, without touching the clock, until `effect` gives a value that passes `done`; real I/O goes on meanwhile. */
export const waitUntil = <A>(effect: Effect.Effect<A>, done: (a: A) => boolean): Effect.Effect<A> =>
  Effect.flatMap(effect, (a) => (done(a) ? Effect.succeed(a) : Effect.andThen(nextTurn, waitUntil(effect, done))))

/** The emulator, and the SDK configured for it, on a clock that records pending sleeps. */
export const emulated = () =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) => NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
  ).pipe(Layer.provideMerge(Emulator.layer()), Layer.provideMerge(recordingClock))

/** The chat request bodies the emulator received, in order. */
export const sentChatBodies = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) =>
  requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body as Record<string, unknown>))

export const GetWeather = AiTool.make("get_weather", {
  description: "Current weather in a city",
  parameters: Schema.Struct({ city: Schema.String.annotate({ description: "City name" }) }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Number })
})

export const GetTime = AiTool.make("get_time", {
  description: "Local time in a zone",
  parameters: Schema.Struct({ zone: Schema.String }),
  success: Schema.Struct({ zone: Schema.String, time: Schema.String })
})

export const toolkit = AiToolkit.make(GetWeather, GetTime)

export const HandlersLive = toolkit.toLayer({
  get_weather: ({ city }) => Effect.succeed({ city, celsius: 21 }),
  get_time: ({ zone }) => Effect.succeed({ zone, time: "12:00" })
})

/** One recorder for every package's tests. */
export { recordingSpans } from "@switchboard/emulator/RecordingTracer"
