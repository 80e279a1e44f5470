/**
 * The tools the agent tests give the emulator, and handlers that record what
 * ran (and when, on the `TestClock`) in a `Recorder` service.
 */
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"

export const model = "gpt-4o-mini"

export class WeatherError extends Schema.TaggedError<WeatherError>()("WeatherError", {
  city: Schema.String,
  reason: Schema.String
}) {}

export const GetWeather = Tool.make("get_weather", {
  description: "Current weather in a city",
  parameters: Schema.Struct({ city: Schema.String.annotate({ description: "City name" }) }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite }),
  failure: WeatherError
})

export const GetTime = Tool.make("get_time", {
  description: "Local time in a time zone",
  parameters: Schema.Struct({ zone: Schema.String.annotate({ description: "IANA zone" }) }),
  success: Schema.String
})

export const Slow = Tool.make("slow", {
  description: "Takes 100 ms",
  parameters: Schema.Struct({ label: Schema.String.annotate({ description: "A label" }) }),
  success: Schema.String
})

export const DeleteFile = Tool.make("delete_file", {
  description: "Deletes a file",
  parameters: Schema.Struct({ path: Schema.String.annotate({ description: "File path" }) }),
  success: Schema.Struct({ deleted: Schema.String }),
  needsApproval: true
})

export const toolkit = Toolkit.make(GetWeather, GetTime, Slow, DeleteFile)

export interface Event {
  readonly tool: string
  readonly label: string
  readonly phase: "start" | "end"
  readonly at: number
}

/** What the handlers did, in order. */
export class Recorder extends Context.Service<Recorder, Ref.Ref<ReadonlyArray<Event>>>()("test/Recorder") {
  static readonly layer = Layer.effect(Recorder, Ref.make<ReadonlyArray<Event>>([]))
}

export const events = Effect.flatMap(Recorder, Ref.get)

const record = (tool: string, label: string, phase: Event["phase"]) =>
  Effect.flatMap(Effect.zip(Recorder, Clock.currentTimeMillis), ([ref, at]) =>
    Ref.update(ref, (all) => [...all, { tool, label, phase, at }]))

/** Runs `effect` between a start and an end record. */
const recordedIn = <A, E, R>(tool: string, label: string, effect: Effect.Effect<A, E, R>) =>
  record(tool, label, "start").pipe(Effect.andThen(effect), Effect.tap(() => record(tool, label, "end")))

/** Handler delays, by tool, on the `TestClock`. */
export interface Delays {
  readonly get_weather?: Duration.Input
  readonly get_time?: Duration.Input
}

/** The handlers, as `effect/ai` has them: built in an effect that takes the services they use. */
export const handlers = (delays: Delays = {}) =>
  toolkit.toLayer(Effect.gen(function*() {
    const recorder = yield* Recorder
    const recorded = <A, E, R>(tool: string, label: string, effect: Effect.Effect<A, E, R>) =>
      recordedIn(tool, label, effect).pipe(Effect.provideService(Recorder, recorder))
    return toolkit.of({
      get_weather: ({ city }) =>
        recorded(
          "get_weather",
          city,
          Effect.andThen(
            Effect.sleep(delays.get_weather ?? 0),
            city === "Atlantis"
              ? Effect.fail(new WeatherError({ city, reason: "no such city" }))
              : Effect.succeed({ city, celsius: 21 })
          )
        ),
      get_time: ({ zone }) => recorded("get_time", zone, Effect.as(Effect.sleep(delays.get_time ?? 0), "12:00")),
      slow: ({ label }) => recorded("slow", label, Effect.as(Effect.sleep("100 millis"), `done ${label}`)),
      delete_file: ({ path }) => recorded("delete_file", path, Effect.succeed({ deleted: path }))
    })
  })).pipe(Layer.provideMerge(Recorder.layer))
