import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import { SwitchboardEmbeddingModel, SwitchboardLanguageModel } from "@switchboard/ai"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as ExecutionPlan from "effect/ExecutionPlan"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

const GetWeather = Tool.make("get_weather", {
  description: "Current temperature in a city",
  parameters: Schema.Struct({ city: Schema.String }),
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
    Stream.runForEach((part) => part.type === "text-delta" ? Effect.sync(() => process.stdout.write(part.delta)) : Effect.void)
  )
  yield* Console.log("")

  const recipe = yield* LanguageModel.generateObject({ prompt: "A pancake recipe", schema: Recipe })
  yield* Console.log(recipe.value.ingredients)

  const vectors = yield* Effect.flatMap(EmbeddingModel.EmbeddingModel, (m) => m.embedMany(["a cat", "a kitten"]))
  yield* Console.log(vectors.embeddings.length)
})

// The three-line setup: Switchboard underneath, the models on top.
const Switchboard = NodeSwitchboard.layerConfig() // SWITCHBOARD_BASE_URL, SWITCHBOARD_API_KEY
const Models = Layer.mergeAll(
  SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" }),
  SwitchboardEmbeddingModel.layer({ model: "text-embedding-3-small" })
)
const main = program.pipe(Effect.provide(Layer.mergeAll(Models, HandlersLive).pipe(Layer.provide(Switchboard))))

// Falling back across models: each `model(...)` is an `effect/ai` Model.
const plan = ExecutionPlan.make(
  { provide: SwitchboardLanguageModel.model("gpt-4o"), attempts: 2 },
  { provide: SwitchboardLanguageModel.model("gpt-4o-mini") }
)
const resilient = LanguageModel.generateText({ prompt: "Hello!" }).pipe(Effect.withExecutionPlan(plan))

await main.pipe(Effect.runPromise)
const answer = await resilient.pipe(Effect.provide(Switchboard), Effect.runPromise)
console.log(answer.text)
