/**
 * The models the service offers (spec 4.2, decision 5).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { decoder } from "./internal/validate.js"
import * as Protocol from "./Protocol.js"
import type { RequestError } from "./SwitchboardError.js"
import { Transport } from "./Transport.js"

/**
 * The models call: lists the models the service offers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly list: Effect.Effect<ReadonlyArray<Protocol.Model>, RequestError>
}

/**
 * The service that lists the models (see `Service`).
 *
 * @since 0.1.0
 * @category tags
 */
export class Models extends Context.Service<Models, Service>()("@switchboard/core/Models") {}

const decodeList = decoder(Protocol.ModelList)

/**
 * Builds the models service over the `Transport`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.map(Effect.service(Transport), (transport): Service => ({
  list: Effect.map(
    transport.call({ method: "GET", path: "/models", decode: decodeList, genAi: { operation: "list_models" } }),
    (list) => list.data
  )
}))

/**
 * The models service over the `Transport`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Models, never, Transport> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(Models, make))

/**
 * Lists the available models.
 *
 * @since 0.1.0
 * @category accessors
 */
export const list: Effect.Effect<ReadonlyArray<Protocol.Model>, RequestError, Models> = Models.use((models) => models.list)
