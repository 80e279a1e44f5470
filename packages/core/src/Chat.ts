/**
 * Chat completions: text, tool calling and multimodal input (spec 4.1).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { decoder, encoder } from "./internal/validate.js"
import * as Protocol from "./Protocol.js"
import type { SwitchboardError } from "./SwitchboardError.js"
import { Transport } from "./Transport.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly create: (request: Protocol.ChatRequest) => Effect.Effect<Protocol.ChatCompletion, SwitchboardError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Chat extends Context.Tag("@switchboard/core/Chat")<Chat, Service>() {}

const encodeRequest = encoder(Protocol.ChatRequest)
const decodeCompletion = decoder(Protocol.ChatCompletion)

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.map(Transport, (transport): Service => ({
  create: (request) =>
    Effect.flatMap(encodeRequest(request), (body) =>
      transport.call({
        method: "POST",
        path: "/chat/completions",
        body,
        decode: decodeCompletion,
        span: "Switchboard.Chat.create",
        model: request.model
      }))
}))

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Chat, never, Transport> = Layer.effect(Chat, make)

/**
 * Sends a chat request and returns the completion. The request is validated
 * first: a request the service would reject fails with an
 * `InvalidRequestError` naming the field, and nothing is sent.
 *
 * @since 0.1.0
 * @category accessors
 */
export const create = (request: Protocol.ChatRequest): Effect.Effect<Protocol.ChatCompletion, SwitchboardError, Chat> =>
  Effect.flatMap(Chat, (chat) => chat.create(request))
