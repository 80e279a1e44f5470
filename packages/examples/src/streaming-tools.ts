import { Chat, type Protocol } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

const city = (name: string): Protocol.Tool => ({
  type: "function",
  function: {
    name,
    parameters: { type: "object", properties: { city: { type: "string", description: "City" } }, required: ["city"] }
  }
})

const program = Effect.gen(function*() {
  const completion = yield* Chat.accumulate(
    Chat.stream(
      {
        model: "gpt-4o-mini",
        tools: [city("get_weather"), city("get_time")],
        messages: [{ role: "user", content: `Use get_weather({"city": "Paris"}) and get_time({"city": "Paris"})` }]
      },
      { includeUsage: true, idleTimeout: "20 seconds" }
    )
  )
  const message = completion.choices[0]!.message
  for (const call of message.tool_calls ?? []) yield* Console.log(`${call.function.name}(${call.function.arguments})`)
  yield* Console.log(`${completion.choices[0]?.finish_reason}, ${completion.usage?.total_tokens} tokens`)
})

await program.pipe(Effect.provide(NodeSwitchboard.layerConfig()), Effect.runPromise)
