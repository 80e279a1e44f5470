import { Chat, Embeddings, Models, Moderations } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

const program = Effect.gen(function*() {
  const models = yield* Models.list
  const completion = yield* Chat.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "Hello!" }]
  })
  const vectors = yield* Embeddings.embedMany(["a", "b", "c"], { model: "text-embedding-3-small" })
  const verdict = yield* Moderations.check("Have a lovely day")
  yield* Console.log(`${models.length} models`)
  yield* Console.log(completion.choices[0]?.message.content)
  yield* Console.log(`${completion.usage?.total_tokens} tokens`)
  yield* Console.log(`${vectors.length} vectors of ${vectors[0]?.length} dimensions`)
  yield* Console.log(verdict.flagged ? "flagged" : "not flagged")
})

await program.pipe(
  Effect.provide(NodeSwitchboard.layerConfig()), // SWITCHBOARD_BASE_URL, SWITCHBOARD_API_KEY
  Effect.runPromise
)
