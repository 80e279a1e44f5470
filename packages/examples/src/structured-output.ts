import { Chat, StructuredOutput } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

class Address extends Schema.Class<Address>("Address")({ city: Schema.String, zip: Schema.String }) {}

const Order = Schema.Struct({
  id: Schema.String,
  status: Schema.Literals(["open", "shipped"]),
  address: Address,
  lines: Schema.Array(Schema.Struct({ sku: Schema.String, quantity: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 9 })) }))
})

const program = Effect.gen(function*() {
  const { completion, value } = yield* Chat.createObject(
    { model: "gpt-4o-mini", messages: [{ role: "user", content: "Describe an order" }] },
    Order
  )
  // value: { id: string; status: "open" | "shipped"; address: Address; lines: ReadonlyArray<…> }
  yield* Console.log(value, `${completion.usage?.total_tokens} tokens`)
}).pipe(
  Effect.catchTag("StructuredOutputError", (e) => Effect.fail(`not an order: ${e.issue}\n${e.text}`))
)

// With a tool forced by tool_choice (the default), then with response_format:
await program.pipe(Effect.provide(NodeSwitchboard.layerConfig()), Effect.runPromise)
await program.pipe(
  Effect.provideService(StructuredOutput.DefaultMode, "json_schema"),
  Effect.provide(NodeSwitchboard.layerConfig()),
  Effect.runPromise
)
