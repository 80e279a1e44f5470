import { Chat, type Protocol } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

const tools: ReadonlyArray<Protocol.Tool> = [{
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather for a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string", description: "City name" } },
      required: ["city"],
      additionalProperties: false
    }
  }
}]

const program = Effect.gen(function*() {
  const question = { role: "user", content: `Use get_weather({"city": "Paris"})` } as const
  const first = yield* Chat.create({ model: "gpt-4o-mini", messages: [question], tools })
  const reply = first.choices[0]!.message
  for (const call of reply.tool_calls ?? []) yield* Console.log(`${call.function.name}(${call.function.arguments})`)
  const results = (reply.tool_calls ?? []).map((call) => ({
    role: "tool" as const,
    tool_call_id: call.id,
    content: JSON.stringify({ temp: 21 })
  }))
  // The assistant message goes back unchanged, then one tool message per call.
  const second = yield* Chat.create({ model: "gpt-4o-mini", messages: [question, reply, ...results], tools })
  yield* Console.log(second.choices[0]?.message.content)
})

await program.pipe(Effect.provide(NodeSwitchboard.layerConfig()), Effect.runPromise)
