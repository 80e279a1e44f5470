/**
 * The emulator in process on a free port, the SDK's Node layer pointed at
 * it, and the provider layers on top: every test is an `effect/ai` program
 * that crosses real HTTP.
 */
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as AiTool from "effect/ai/Tool"
import * as AiToolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"


/** The event loop's next turn: I/O callbacks run (no time is waited). */
const nextTurn = Effect.callback<void>((resume) => void setImmediate(() => resume(Effect.void)))

/** Waits, without touching the clock, until `effect` gives a value that passes `done`; real I/O goes on meanwhile. */
export const waitUntil = <A>(effect: Effect.Effect<A>, done: (a: A) => boolean): Effect.Effect<A> =>
  Effect.flatMap(effect, (a) => (done(a) ? Effect.succeed(a) : Effect.andThen(nextTurn, waitUntil(effect, done))))

/** The emulator, and the SDK configured for it, on a clock that records pending sleeps. */
export const emulated = () =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) => NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
  ).pipe(Layer.provideMerge(Emulator.layer()), Layer.provideMerge(RecordingClock.layer))

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
