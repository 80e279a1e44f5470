import { Agent } from "@switchboard/agent"
import { NodeSwitchboard } from "@switchboard/node"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const City = Schema.Struct({ city: Schema.String })
const toolkit = Toolkit.make(
  Tool.make("get_weather", { description: "Temperature in a city", parameters: City, success: Schema.Finite }),
  Tool.make("get_time", { description: "Local time in a city", parameters: City, success: Schema.String })
)
const HandlersLive = toolkit.toLayer({
  get_weather: ({ city }) => Effect.succeed(city === "Paris" ? 21 : 4),
  get_time: () => Effect.succeed("12:00")
})

// Typed output: once the model answers, one more call asks for a Report and decodes it.
const Report = Schema.Struct({
  summary: Schema.String,
  readings: Schema.Array(Schema.Struct({ city: Schema.String, celsius: Schema.Finite }))
})

const program = Effect.gen(function*() {
  const result = yield* Agent.run({
    model: "gpt-4o-mini",
    toolkit,
    // The emulator reads the message as a script (docs/emulator.md, "Tools"):
    // two parallel calls, then one; a real model decides for itself.
    messages: [{
      role: "user",
      content: `Use get_weather({"city": "Paris"}) and get_time({"city": "Paris"}) then get_weather({"city": "Oslo"})`
    }],
    output: Report,
    // A stronger model after the first step, and only get_weather from then on.
    prepareStep: ({ index, tools }) =>
      Effect.succeed(index === 0 ? {} : { model: "gpt-4o", tools: tools.filter((t) => t.function.name === "get_weather") }),
    // After each step, with its tool results in the transcript: a checkpoint.
    onStep: (step, transcript) =>
      Console.log(`step ${step.index}: ${step.toolResults.map((r) => `${r.name} → ${r.content}`).join(", ") || "answer"} (${transcript.length} messages)`)
  })
  // result.output: { summary: string; readings: ReadonlyArray<{ city: string; celsius: number }> } | undefined
  yield* Console.log(result.status, result.output)
})

await program.pipe(Effect.provide(Layer.merge(HandlersLive, NodeSwitchboard.layerConfig())), Effect.runPromise)
