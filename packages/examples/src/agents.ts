import { Agent, Transcript } from "@switchboard/agent"
import { NodeSwitchboard } from "@switchboard/node"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

// A service the handler uses: handlers are provided as a Layer.
class WeatherApi extends Context.Service<WeatherApi, {
  readonly current: (city: string) => Effect.Effect<number, CityNotFound>
}>()("WeatherApi") {}

class CityNotFound extends Schema.TaggedError<CityNotFound>()("CityNotFound", { city: Schema.String }) {}

const GetWeather = Tool.make("get_weather", {
  description: "Current temperature in a city",
  parameters: Schema.Struct({
    city: Schema.String.annotate({ description: "City name, e.g. Paris" }),
    unit: Schema.optional(Schema.Literals(["celsius", "fahrenheit"])).annotate({ description: "Default celsius" })
  }),
  success: Schema.Struct({ city: Schema.String, temperature: Schema.Finite }),
  failure: CityNotFound // sent back to the model as {"error": {"_tag": "CityNotFound", "city": "…"}}
}).annotate(Agent.ToolTimeout, "10 seconds")

const SendEmail = Tool.make("send_email", {
  description: "Sends an email",
  parameters: Schema.Struct({
    to: Schema.String.annotate({ description: "Recipient address" }),
    body: Schema.String.annotate({ description: "Plain text" })
  }),
  success: Schema.Struct({ sent: Schema.Boolean }),
  needsApproval: true // the run pauses before each call
})

const toolkit = Toolkit.make(GetWeather, SendEmail)

// `city` is a string and `unit` is "celsius" | "fahrenheit" | undefined, both
// inferred from the schema. Returning the wrong shape or failing with an
// undeclared error does not compile. The services the handlers use are
// taken when the layer is built, as effect/ai has it.
const HandlersLive = toolkit.toLayer(Effect.gen(function*() {
  const api = yield* WeatherApi
  return toolkit.of({
    get_weather: ({ city, unit }) =>
      Effect.map(api.current(city), (celsius) => ({ city, temperature: unit === "fahrenheit" ? celsius * 9 / 5 + 32 : celsius })),
    send_email: ({ to }) => Effect.as(Console.log(`sending to ${to}`), { sent: true })
  })
})) // Layer<Tool.Handler<"get_weather"> | Tool.Handler<"send_email">, never, WeatherApi>

const WeatherApiLive = Layer.succeed(WeatherApi, {
  current: (city) => (city === "Atlantis" ? Effect.fail(new CityNotFound({ city })) : Effect.succeed(21))
})

/** Asks for approval on the console; here every call is approved. */
const approve = (pending: ReadonlyArray<Agent.PendingApproval>) =>
  Effect.as(
    Effect.forEach(pending, (call) => Console.log(`approve ${call.name}(${call.arguments})?`)),
    Object.fromEntries(pending.map((call) => [call.approvalId, "approve" as const]))
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

// The emulator calls the tools a question names (docs/emulator.md, "Tools"),
// in steps split on "then": a real model decides for itself.
const question = `Use get_weather({"city": "Paris"}) and get_weather({"city": "Atlantis"}) ` +
  `then send_email({"to": "ana@example.com", "body": "21 degrees in Paris"})`

const answer = await program(question).pipe(
  Effect.provide(Layer.mergeAll(HandlersLive.pipe(Layer.provide(WeatherApiLive)), NodeSwitchboard.layerConfig())),
  Effect.runPromise
)
console.log(answer)
