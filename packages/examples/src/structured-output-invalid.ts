import { Chat } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

// A name the service does not accept (1–64 of A-Z a-z 0-9 _ -): refused before anything is sent.
const program = Chat.create({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "An order, please" }],
  response_format: { type: "json_schema", json_schema: { name: "an order", schema: { type: "object" } } }
}).pipe(
  Effect.catchTag("InvalidRequestError", (e) => Console.log(`${e._tag}: ${e.message} (field: ${e.field})`))
)

await program.pipe(Effect.provide(NodeSwitchboard.layerConfig()), Effect.runPromise)
