import { Chat, Switchboard, SwitchboardConfig, TaskJournal } from "@switchboard/core"
import * as HttpClientWire from "@switchboard/core/HttpClientWire"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const Sdk = Switchboard.layer.pipe(
  Layer.provideMerge(SwitchboardConfig.layerConfig()),
  Layer.provide(TaskJournal.layerMemory),
  Layer.provide(HttpClientWire.layer),
  Layer.provide(NodeHttpClient.layerUndici) // or any HttpClient layer of your own
)

await Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).pipe(
  Effect.flatMap((completion) => Console.log(completion.choices[0]?.message.content)),
  Effect.provide(Sdk),
  Effect.runPromise
)
