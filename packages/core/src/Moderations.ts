/**
 * Text moderation (spec 4.5).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { encoder, plainDecoder } from "./internal/validate.js"
import * as Protocol from "./Protocol.js"
import { type RequestError, ResponseDecodeError } from "./SwitchboardError.js"
import { Transport } from "./Transport.js"

/**
 * The moderation call: classifies text against the service's categories.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly create: (
    request: Protocol.ModerationRequest
  ) => Effect.Effect<Protocol.ModerationResponse, RequestError>
}

/**
 * The service that makes moderation calls (see `Service`).
 *
 * @since 0.1.0
 * @category tags
 */
export class Moderations extends Context.Service<Moderations, Service>()("@switchboard/core/Moderations") {}

const encodeRequest = encoder(Protocol.ModerationRequest)
const decodeResponse = plainDecoder(Protocol.ModerationResponse)

/**
 * Builds the moderation service over the `Transport`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.map(Effect.service(Transport), (transport): Service => ({
  create: (request) =>
    Effect.flatMap(Effect.fromResult(encodeRequest(request)), (body) =>
      transport.call({
        method: "POST",
        path: "/moderations",
        body,
        decode: decodeResponse,
        genAi: { operation: "moderations", model: request.model }
      }))
}))

/**
 * The moderation service over the `Transport`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Moderations, never, Transport> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(Moderations, make))

/**
 * Moderates one text or several.
 *
 * @since 0.1.0
 * @category accessors
 */
export const create = (
  request: Protocol.ModerationRequest
): Effect.Effect<Protocol.ModerationResponse, RequestError, Moderations> =>
  Moderations.use((moderations) => moderations.create(request))

/**
 * Whether one text is flagged: the first result of `create`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const check = (
  input: string,
  options: { readonly model?: string } = {}
): Effect.Effect<Protocol.ModerationResult, RequestError, Moderations> =>
  Effect.flatMap(create({ input, ...options }), (response) =>
    response.results[0] === undefined
      ? Effect.fail(new ResponseDecodeError({ message: "moderation response has no results", body: "" }))
      : Effect.succeed(response.results[0]))
