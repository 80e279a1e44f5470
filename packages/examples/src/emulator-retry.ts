import { Chat } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

// The first two chat requests fail: a 429 with retry-after-ms: 200, then a 503.
const EmulatorLive = Emulator.layer({
  faults: {
    paths: ["/v1/chat/completions"],
    script: [{ _tag: "Status", status: 429, retryAfterMs: 200 }, { _tag: "Status", status: 503 }]
  }
})

const SwitchboardLive = Layer.unwrap(
  Effect.map(Emulator.Emulator, (e) => NodeSwitchboard.layer({ baseUrl: e.url, apiKey: e.apiKey }))
)

const program = Effect.gen(function*() {
  // Both failures are retried (the 429 after the 200 ms it asked for); the third request is answered.
  const completion = yield* Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] })
  const emulator = yield* Emulator.Emulator
  yield* Console.log(`${yield* emulator.requestCount} requests; ${completion.choices[0]?.finish_reason}`)
})

await program.pipe(Effect.provide(SwitchboardLive.pipe(Layer.provideMerge(EmulatorLive))), Effect.runPromise)
