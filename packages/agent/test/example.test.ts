/**
 * An agent with typed tools and an approval, run against the emulator, with
 * its error channel checked by type. The docs' own example is
 * packages/examples/src/agents.ts, checked by packages/examples/test/docs.test.ts.
 */
import { expect, expectTypeOf, it } from "@effect/vitest"
import { Agent, type AgentError, Tool, Toolkit, Transcript } from "@switchboard/agent"
import type * as Chat from "@switchboard/core/Chat"
import type { SwitchboardError } from "@switchboard/core/SwitchboardError"
import type * as ParseResult from "effect/ParseResult"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { emulated } from "./fixtures.js"

// --- an agent with typed tools and an approval ---------------------------------

// A service the handler uses: handlers are provided as a Layer.
class WeatherApi extends Context.Tag("WeatherApi")<WeatherApi, {
  readonly current: (city: string) => Effect.Effect<number, CityNotFound>
}>() {}

class CityNotFound extends Schema.TaggedError<CityNotFound>()("CityNotFound", { city: Schema.String }) {}

const GetWeather = Tool.make("get_weather", {
  description: "Current temperature in a city",
  parameters: Schema.Struct({
    city: Schema.String.annotations({ description: "City name, e.g. Paris" }),
    unit: Schema.optional(Schema.Literal("celsius", "fahrenheit")).annotations({ description: "Default celsius" })
  }),
  success: Schema.Struct({ city: Schema.String, temperature: Schema.Number }),
  failure: CityNotFound, // sent back to the model as {"error": {"city": "…", "_tag": "CityNotFound"}}
  timeout: "10 seconds"
})

const SendEmail = Tool.make("send_email", {
  description: "Sends an email",
  parameters: Schema.Struct({
    to: Schema.String.annotations({ description: "Recipient address" }),
    body: Schema.String.annotations({ description: "Plain text" })
  }),
  success: Schema.Struct({ sent: Schema.Boolean }),
  needsApproval: true // the run pauses before each call
})

const toolkit = Toolkit.make(GetWeather, SendEmail)

const HandlersLive = toolkit.toLayer({
  get_weather: ({ city, unit }) =>
    Effect.flatMap(WeatherApi, (api) => api.current(city)).pipe(
      Effect.map((celsius) => ({ city, temperature: unit === "fahrenheit" ? celsius * 9 / 5 + 32 : celsius }))
    ),
  send_email: ({ to }) => Effect.as(Console.log(`sending to ${to}`), { sent: true })
})

const WeatherApiLive = Layer.succeed(WeatherApi, {
  current: (city) => (city === "Atlantis" ? Effect.fail(new CityNotFound({ city })) : Effect.succeed(21))
})

/** Asks for approval on the console; here every call is approved. */
const approve = (pending: ReadonlyArray<Agent.PendingApproval>) =>
  Effect.as(
    Effect.forEach(pending, (call) => Console.log(`approve ${call.name}(${call.arguments})?`)),
    Object.fromEntries(pending.map((call) => [call.callId, "approve" as const]))
  )

const program = (question: string) =>
  Effect.gen(function*() {
    const options = { model: "gpt-4o-mini", toolkit, maxSteps: 8, budget: { totalTokens: 20_000, duration: Duration.minutes(2) } }
    let result = yield* Agent.run({ ...options, messages: [{ role: "user", content: question }] })
    while (result.status === "paused") {
      // The transcript is plain JSON: it could be stored here and resumed elsewhere.
      const saved = yield* Transcript.toJson(result.transcript)
      const decisions = yield* approve(result.pending)
      result = yield* Agent.resume({ ...options, transcript: yield* Transcript.fromJson(saved), decisions })
    }
    return result.text
  }).pipe(
    // Every way the loop can stop without an answer is a typed error with the transcript.
    Effect.catchTags({
      MaxStepsExceeded: (e) => Effect.succeed(`gave up after ${e.maxSteps} steps (${e.transcript.length} messages)`),
      BudgetExceeded: (e) => Effect.succeed(`over budget: ${e.message}`),
      LoopDetected: (e) => Effect.succeed(`the model kept calling ${e.tool}`)
    })
  )

// In an application: Effect.provide(Layer.mergeAll(HandlersLive, NodeSwitchboard.layerConfig())).
const AppLive = (switchboard: ReturnType<typeof emulated>) =>
  Layer.merge(HandlersLive.pipe(Layer.provide(WeatherApiLive)), switchboard)

// -----------------------------------------------------------------------------

it("the docs example's program says what can go wrong and what it needs", () => {
  expectTypeOf(program).returns.toEqualTypeOf<
    Effect.Effect<
      string,
      AgentError.ToolDefect | SwitchboardError | ParseResult.ParseError,
      Chat.Chat | Tool.Handler<"get_weather"> | Tool.Handler<"send_email">
    >
  >()
  expectTypeOf(HandlersLive).toEqualTypeOf<
    Layer.Layer<Tool.Handler<"get_weather"> | Tool.Handler<"send_email">, never, WeatherApi>
  >()
})

it.effect("the docs example runs: weather, a typed failure, an approved email", () =>
  Effect.gen(function*() {
    const text = yield* program(
      `Use get_weather({"city": "Paris"}) and get_weather({"city": "Atlantis"}) then send_email`
    )
    expect(text).toContain(`get_weather → {"city":"Paris","temperature":21}`)
    expect(text).toContain(`get_weather → {"error":{"city":"Atlantis","_tag":"CityNotFound"}}`)
    expect(text).toContain(`send_email → {"sent":true}`)
  }).pipe(Effect.provide(AppLive(emulated()))))
