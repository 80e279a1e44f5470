/**
 * Every capability in one layer, over a configuration and an `HttpClient`.
 * Platform packages (`@switchboard/node`, `@switchboard/browser`) provide both.
 *
 * @since 0.1.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Layer from "effect/Layer"
import * as Chat from "./Chat.js"
import * as Embeddings from "./Embeddings.js"
import * as Models from "./Models.js"
import * as Moderations from "./Moderations.js"
import type { SwitchboardConfig } from "./SwitchboardConfig.js"
import * as Transport from "./Transport.js"

/**
 * The services `layer` provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | Chat.Chat
  | Embeddings.Embeddings
  | Models.Models
  | Moderations.Moderations
  | Transport.Transport

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Services, never, SwitchboardConfig | HttpClient.HttpClient> = Layer.mergeAll(
  Chat.layer,
  Embeddings.layer,
  Models.layer,
  Moderations.layer
).pipe(Layer.provideMerge(Transport.layer))
