import { Chat, Pacing, type ResponseMetadata, Switchboard } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hello!" }] }

// A hook for logs and metrics: every reply, a refused attempt too.
const log = (response: ResponseMetadata.ResponseMetadata) =>
  Console.log(`hook: ${response.status}, the service spent ${Duration.format(response.processingTime ?? Duration.zero)}`)

const program = Effect.gen(function*() {
  const [completion, response] = yield* Switchboard.withResponse(Chat.create(request))
  yield* Console.log(`${response.status} after ${response.attempts} attempt, ${completion.usage?.total_tokens} tokens`)
  yield* Console.log(`request id: ${response.requestId?.startsWith("req_") ? "req_…" : "none"}`)
  const { limitRequests, remainingRequests, resetRequests } = response.rateLimits
  yield* Console.log(`${remainingRequests} of ${limitRequests} requests left, whole in ${Duration.format(resetRequests!)}`)

  // A stream's metadata comes with its headers, before its first chunk.
  const [chunks, head] = yield* Switchboard.withResponse(Chat.stream(request))
  yield* Console.log(`stream: ${head.status}, ${head.headers["content-type"]}`)
  yield* Stream.runDrain(chunks)

  yield* Chat.create(request).pipe(Switchboard.withRequestOptions({ onResponse: log }))
})

await program.pipe(
  Effect.scoped, // the stream lives in the scope
  Effect.provide(Pacing.layer), // calls wait while the rate limit is spent, rather than meet a 429
  Effect.provide(NodeSwitchboard.layerConfig()),
  Effect.runPromise
)
