import { Chat, Images } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

const program = Effect.gen(function*() {
  // Values the types allow but the service would refuse: refused here, nothing is sent.
  // (Effect.flip makes the failure the value, to print it.)
  const images = yield* Effect.flip(Images.generate({ prompt: "a fox", n: 0 }))
  yield* Console.log(`${images._tag}: ${images.message}`)
  const chat = yield* Effect.flip(Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }], max_tokens: 0.5 }))
  yield* Console.log(`${chat._tag}: ${chat.message}`)
})

await program.pipe(Effect.provide(NodeSwitchboard.layerConfig()), Effect.runPromise)
