import { Chat } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Tell me about streams" }] }

const program = Effect.gen(function*() {
  // The text as it arrives, then, last, the whole completion: one request.
  yield* Chat.streamWithCompletion(request).pipe(
    Stream.runForEach((part) =>
      part._tag === "TextDelta"
        ? Effect.sync(() => process.stdout.write(part.text))
        : Console.log(`\n${part.completion.choices[0]?.finish_reason}, ${part.completion.usage?.total_tokens} tokens`)
    )
  )
})

await program.pipe(Effect.provide(NodeSwitchboard.layerConfig()), Effect.runPromise)
