import { Chat } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

const program = Effect.gen(function*() {
  const completion = yield* Chat.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "Hello!" }]
  })
  yield* Console.log(completion.choices[0]?.message.content)
})

// SWITCHBOARD_BASE_URL and SWITCHBOARD_API_KEY; the key is held as a
// `Redacted` from here to the Authorization header.
await program.pipe(Effect.provide(NodeSwitchboard.layerConfig()), Effect.runPromise)
