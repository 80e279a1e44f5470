import { Chat } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

const ask = (model: string, maxTokens = 100) =>
  Chat.create({ model, messages: [{ role: "user", content: "Hi" }], max_tokens: maxTokens }).pipe(
    Effect.map((completion) => `answered: ${completion.choices[0]?.finish_reason}`),
    // Each failure is a typed error: handle the ones you can act on.
    Effect.catchTags({
      AuthenticationError: (e) => Effect.succeed(`check SWITCHBOARD_API_KEY (HTTP ${e.status})`),
      NotFoundError: (e) => Effect.succeed(`no such model (HTTP ${e.status}): ${e.message}`),
      InvalidRequestError: (e) => Effect.succeed(`fix ${e.field}, nothing was sent: ${e.message}`)
    })
  )

const withKey = (apiKey: string) =>
  NodeSwitchboard.layer({
    baseUrl: process.env["SWITCHBOARD_BASE_URL"]!,
    apiKey,
    maxRetries: 4,
    retryBaseDelay: "250 millis",
    maxRetryDelay: "10 seconds",
    timeout: "30 seconds" // per attempt
  })

const key = process.env["SWITCHBOARD_API_KEY"]!
await Effect.runPromise(Effect.gen(function*() {
  yield* Console.log(yield* Effect.provide(ask("gpt-4o-mini"), withKey(key)))
  yield* Console.log(yield* Effect.provide(ask("gpt-4o-mini"), withKey("sk-wrong")))
  yield* Console.log(yield* Effect.provide(ask("gpt-nope"), withKey(key)))
  yield* Console.log(yield* Effect.provide(ask("gpt-4o-mini", 0), withKey(key)))
}))
