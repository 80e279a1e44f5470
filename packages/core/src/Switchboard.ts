/**
 * Every capability in one layer, over a configuration, an `HttpWire` and a
 * task journal. Platform packages (`@switchboard/node`,
 * `@switchboard/browser`) provide all three.
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as Chat from "./Chat.js"
import * as EffectVersion from "./EffectVersion.js"
import * as Embeddings from "./Embeddings.js"
import * as Images from "./Images.js"
import * as Models from "./Models.js"
import * as Moderations from "./Moderations.js"
import * as RequestOptions from "./RequestOptions.js"
import * as ResponseMetadata from "./ResponseMetadata.js"
import type { HttpWire } from "./HttpWire.js"
import type { SwitchboardConfig } from "./SwitchboardConfig.js"
import type { TaskJournal } from "./TaskJournal.js"
import * as Transport from "./Transport.js"
import * as Videos from "./Videos.js"

/**
 * The services `layer` provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | Chat.Chat
  | Embeddings.Embeddings
  | Images.Images
  | Models.Models
  | Moderations.Moderations
  | Transport.Transport
  | Videos.Videos

/**
 * Checks, when built, that the application runs one copy of Effect 4.1
 * (`EffectVersion`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Services, never, SwitchboardConfig | HttpWire | TaskJournal> = EffectVersion.guard(
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(
    Layer
      .mergeAll(Chat.layer, Images.layer, Embeddings.layer, Models.layer, Moderations.layer, Videos.layer)
      .pipe(Layer.provideMerge(Transport.layer))
  )
)

/**
 * Per-call options for every call inside an effect or a stream: `timeout`,
 * `maxRetries`, `retryBaseDelay`, `maxRetryDelay`, `retry` (a `Retry.Rule`),
 * `headers`, `streamFirstByteTimeout`, `streamIdleTimeout`,
 * `streamTotalTimeout`, `onResponse` (a hook called with each reply's
 * `ResponseMetadata`). They win over the layer's configuration, which wins
 * over the defaults; an inner `withRequestOptions` wins over an outer one
 * (headers are merged, both hooks run). Headers cannot replace
 * `authorization`.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Switchboard from "@switchboard/core/Switchboard"
 *
 * const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] }
 * const quick = Chat.create(request).pipe(Switchboard.withRequestOptions({ timeout: "5 seconds", maxRetries: 0 }))
 * ```
 * @since 0.1.0
 * @category combinators
 */
export const withRequestOptions = RequestOptions.withRequestOptions

/**
 * A call's value beside the metadata of its reply (`ResponseMetadata`):
 * status, request id, redacted headers, rate limits, processing time,
 * timings, attempts. Over a stream, the metadata comes as soon as the
 * headers do, before the first chunk.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Switchboard from "@switchboard/core/Switchboard"
 * import * as Effect from "effect/Effect"
 *
 * const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] }
 * const program = Effect.gen(function*() {
 *   const [completion, response] = yield* Switchboard.withResponse(Chat.create(request))
 *   return { id: completion.id, requestId: response.requestId }
 * })
 * ```
 * @since 1.1.0
 * @category combinators
 */
export const withResponse = ResponseMetadata.withResponse
