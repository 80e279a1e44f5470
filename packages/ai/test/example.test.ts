/**
 * The example of docs/effect-ai.md, run against the emulator: if it stops
 * compiling or working, the docs are wrong.
 */
import { expect, it } from "@effect/vitest"
import { Emulator } from "@switchboard/emulator"
import * as ConfigProvider from "effect/ConfigProvider"

// --- docs/effect-ai.md: example -----------------------------------------------
import { EmbeddingModel, LanguageModel, Tool, Toolkit } from "@effect/ai"
import { SwitchboardEmbeddingModel, SwitchboardLanguageModel } from "@switchboard/ai"
import { NodeSwitchboard } from "@switchboard/node"
import { Console, Effect, ExecutionPlan, Layer, Schema, Stream } from "effect"

const GetWeather = Tool.make("get_weather", {
  description: "Current temperature in a city",
  parameters: { city: Schema.String },
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Number })
})
const toolkit = Toolkit.make(GetWeather)
const HandlersLive = toolkit.toLayer({ get_weather: ({ city }) => Effect.succeed({ city, celsius: 21 }) })

const Recipe = Schema.Struct({
  title: Schema.String,
  ingredients: Schema.Array(Schema.Struct({ name: Schema.String, grams: Schema.Number }))
})

const program = Effect.gen(function*() {
  const text = yield* LanguageModel.generateText({ prompt: "Hello!" })
  yield* Console.log(text.text)

  const withTools = yield* LanguageModel.generateText({ prompt: "Use get_weather for Paris", toolkit })
  yield* Console.log(withTools.toolResults.map((r) => r.result)) // decoded by the tool's success schema

  yield* LanguageModel.streamText({ prompt: "Tell me a story" }).pipe(
    Stream.runForEach((part) => part.type === "text-delta" ? Console.log(part.delta) : Effect.void)
  )

  const recipe = yield* LanguageModel.generateObject({ prompt: "A pancake recipe", schema: Recipe })
  yield* Console.log(recipe.value.ingredients)

  const vectors = yield* EmbeddingModel.EmbeddingModel.pipe(Effect.flatMap((m) => m.embedMany(["a cat", "a kitten"])))
  yield* Console.log(vectors.length)
  return { text: text.text, weather: withTools.toolResults[0]?.result, recipe: recipe.value, vectors }
})

// The three-line setup: Switchboard underneath, the models on top.
const Switchboard = NodeSwitchboard.layerConfig() // SWITCHBOARD_BASE_URL, SWITCHBOARD_API_KEY
const Models = Layer.mergeAll(
  SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" }),
  SwitchboardEmbeddingModel.layer({ model: "text-embedding-3-small" })
)
const main = program.pipe(Effect.provide(Layer.mergeAll(Models, HandlersLive).pipe(Layer.provide(Switchboard))))

// Falling back across models: each `model(...)` is an `@effect/ai` Model.
const plan = ExecutionPlan.make(
  { provide: SwitchboardLanguageModel.model("gpt-4o"), attempts: 2 },
  { provide: SwitchboardLanguageModel.model("gpt-4o-mini") }
)
const resilient = LanguageModel.generateText({ prompt: "Hello!" }).pipe(Effect.withExecutionPlan(plan))
// --- end of example ------------------------------------------------------------

/** `layerConfig` reads the environment: here, the emulator's address and key. */
const withEmulator = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Emulator.Emulator, (emulator) =>
    Effect.withConfigProvider(
      effect,
      ConfigProvider.fromMap(new Map([["SWITCHBOARD_BASE_URL", emulator.url], ["SWITCHBOARD_API_KEY", emulator.apiKey]]))
    )).pipe(Effect.provide(Emulator.layer()))

it.live("the docs/effect-ai.md example runs against the emulator", () =>
  Effect.gen(function*() {
    const result = yield* withEmulator(main)
    expect(result.text).toContain(`You said: "Hello!"`)
    expect(result.weather).toEqual({ city: "sample city", celsius: 21 })
    expect(result.recipe.ingredients).toEqual([{ name: "sample name", grams: 42 }])
    expect(result.vectors).toHaveLength(2)
    const fallback = yield* withEmulator(Effect.provide(resilient, Switchboard))
    expect(fallback.text).toContain("You said")
  }))
