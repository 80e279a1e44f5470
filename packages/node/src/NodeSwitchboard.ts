/**
 * Every Switchboard capability over Node's undici HTTP client (keep-alive).
 *
 * @since 0.1.0
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Switchboard from "@switchboard/core/Switchboard"
import * as SwitchboardConfig from "@switchboard/core/SwitchboardConfig"
import type { InvalidRequestError } from "@switchboard/core/SwitchboardError"
import type * as ConfigError from "effect/ConfigError"
import * as Layer from "effect/Layer"

/**
 * What the Node layers provide: every core service and the configuration.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Switchboard.Services | SwitchboardConfig.SwitchboardConfig

const overUndici = <E>(config: Layer.Layer<SwitchboardConfig.SwitchboardConfig, E>) =>
  Switchboard.layer.pipe(Layer.provideMerge(config), Layer.provide(NodeHttpClient.layerUndici))

/**
 * @example
 * ```ts
 * Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).pipe(
 *   Effect.provide(NodeSwitchboard.layer({ baseUrl: "http://127.0.0.1:8787", apiKey: "sk-..." }))
 * )
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: SwitchboardConfig.Options): Layer.Layer<Services, InvalidRequestError> =>
  overUndici(SwitchboardConfig.layer(options))

/**
 * Reads `SWITCHBOARD_BASE_URL` and `SWITCHBOARD_API_KEY` from the environment.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Omit<SwitchboardConfig.Options, "baseUrl" | "apiKey"> = {}
): Layer.Layer<Services, InvalidRequestError | ConfigError.ConfigError> =>
  overUndici(SwitchboardConfig.layerConfig(options))
