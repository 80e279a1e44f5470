/**
 * Every Switchboard capability over Node's undici HTTP client (keep-alive),
 * through `NodeHttpWire`.
 *
 * @since 0.1.0
 */
import * as EffectVersion from "@switchboard/core/EffectVersion"
import * as Switchboard from "@switchboard/core/Switchboard"
import * as SwitchboardConfig from "@switchboard/core/SwitchboardConfig"
import type { ConfigurationError, JournalError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import type * as ConfigError from "effect/ConfigError"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeHttpWire from "./NodeHttpWire.js"
import * as NodeTaskJournal from "./NodeTaskJournal.js"

/**
 * The core options, plus where video tasks are journaled.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends SwitchboardConfig.Options {
  /**
   * A directory for the task journal, so tasks survive a restart
   * (`NodeTaskJournal`). Without it the journal lives in memory.
   */
  readonly journalDirectory?: string | undefined
  /**
   * A journal of your own, e.g. `SqlTaskJournal` of `@switchboard/workflow`
   * for processes on several machines; it takes the place of `journalDirectory`.
   */
  readonly journal?: Layer.Layer<TaskJournal.TaskJournal, JournalError> | undefined
}

/**
 * What the Node layers provide: every core service and the configuration.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Switchboard.Services | SwitchboardConfig.SwitchboardConfig | TaskJournal.TaskJournal

// Guarded, so that an application on the wrong Effect hears it from the layer it provides.
const overUndici = <E>(config: Layer.Layer<SwitchboardConfig.SwitchboardConfig, E>, options: Pick<Options, "journal" | "journalDirectory">) =>
  EffectVersion.guard(Switchboard.layer.pipe(
    Layer.provideMerge(config),
    Layer.provideMerge(
      options.journal ?? (options.journalDirectory === undefined ? TaskJournal.layerMemory : NodeTaskJournal.layer(options.journalDirectory))
    ),
    Layer.provide(NodeHttpWire.layer)
  ))

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
export const layer = (options: Options): Layer.Layer<Services, ConfigurationError | JournalError> =>
  overUndici(SwitchboardConfig.layer(options), options)

/**
 * Reads `SWITCHBOARD_BASE_URL` and `SWITCHBOARD_API_KEY` from the environment.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Omit<Options, "baseUrl" | "apiKey"> = {}
): Layer.Layer<Services, ConfigurationError | JournalError | ConfigError.ConfigError> =>
  overUndici(SwitchboardConfig.layerConfig(options), options)

/**
 * A runtime holding every service, for programs that make many calls from
 * outside Effect (a server's handlers, a script's `await`s): its connection
 * pool is built once, on the first call, and shared by every call until
 * `dispose()`.
 *
 * @example
 * ```ts
 * const switchboard = NodeSwitchboard.runtime({ baseUrl: "http://127.0.0.1:8787", apiKey: "sk-..." })
 * const reply = await switchboard.runPromise(Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }))
 * await switchboard.dispose()
 * ```
 * @since 0.1.0
 * @category runtime
 */
export const runtime = (options: Options): ManagedRuntime.ManagedRuntime<Services, ConfigurationError | JournalError> =>
  ManagedRuntime.make(layer(options))
