import { Models } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

// The emulator on a free port of 127.0.0.1, and the SDK pointed at it.
const layer = Layer.unwrap(
  Effect.map(Emulator.Emulator, (e) => NodeSwitchboard.layer({ baseUrl: e.url, apiKey: e.apiKey }))
).pipe(Layer.provide(Emulator.layer()))

await Models.list.pipe(
  Effect.flatMap((models) => Console.log(models.map((model) => model.id).join(", "))),
  Effect.provide(layer),
  Effect.runPromise
)
