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
import { fromEnvironment } from "@switchboard/core/internal/environment"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeHttpWire from "./NodeHttpWire.js"
import * as NodeTaskJournal from "./NodeTaskJournal.js"

/**
 * The core options, plus where video tasks are journaled and how the
 * service is reached: `proxy` (`HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`
 * honoured by default, `"none"` to go direct) and `dispatcher` (an undici
 * `Dispatcher` of your own), as `NodeHttpWire.Options` describes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends SwitchboardConfig.Options, NodeHttpWire.Options {
  /**
   * A directory for the task journal, so tasks survive a restart
   * (`NodeTaskJournal`). Without it (and without `journal`), `layer` keeps
   * the journal in memory and `layerConfig` in `NodeTaskJournal.defaultDirectory`.
   */
  readonly journalDirectory?: string | undefined
  /**
   * A journal of your own, e.g. `SqlTaskJournal` of `@switchboard/workflow`
   * for processes on several machines, or `TaskJournal.layerMemory` to
   * keep tasks in memory on purpose; it takes the place of `journalDirectory`.
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

/**
 * The memory journal `layer` falls back on, saying so with a warning at
 * the first task it takes: a crash loses the tasks it holds, which
 * nobody should learn from a lost video.
 */
const memoryWithWarning: Layer.Layer<TaskJournal.TaskJournal> = Layer.effect(
  TaskJournal.TaskJournal,
  Effect.map(TaskJournal.TaskJournal, (journal) => {
    let warned = false
    const warn = Effect.suspend(() => {
      if (warned) return Effect.void
      warned = true
      return Effect.logWarning(
        "Video tasks are journaled in memory only: if this process stops, its unfinished tasks are lost. " +
          "Give NodeSwitchboard.layer a journalDirectory (or use NodeSwitchboard.layerConfig, which keeps them on disk)."
      )
    })
    return { ...journal, reserve: (draft) => Effect.andThen(warn, journal.reserve(draft)) }
  })
).pipe(Layer.provide(TaskJournal.layerMemory))

const journalOf = <E>(
  options: Pick<Options, "journal" | "journalDirectory">,
  fallback: Layer.Layer<TaskJournal.TaskJournal, E>
): Layer.Layer<TaskJournal.TaskJournal, E | JournalError> =>
  options.journal ?? (options.journalDirectory === undefined ? fallback : NodeTaskJournal.layer(options.journalDirectory))

// Guarded, so that an application on the wrong Effect hears it from the layer it provides.
// Fresh: Effect 4 memoizes layers by reference across nested `Effect.provide`s,
// and `Switchboard.layer` is one constant, so a second SDK layer (another key,
// another journal) would otherwise get the first one's services.
const overUndici = <E, E2>(
  config: Layer.Layer<SwitchboardConfig.SwitchboardConfig, E>,
  journal: Layer.Layer<TaskJournal.TaskJournal, E2>,
  wire: NodeHttpWire.Options
) =>
  EffectVersion.guard(Layer.fresh(Switchboard.layer.pipe(
    Layer.provideMerge(config),
    Layer.provideMerge(journal),
    Layer.provide(NodeHttpWire.layerWith({ proxy: wire.proxy, dispatcher: wire.dispatcher }))
  )))

/**
 * Every service, configured in code. The video task journal is in memory
 * unless `journalDirectory` or `journal` says otherwise (a warning says so
 * at the first task): for tests and short programs; a program that submits
 * paid tasks gives it a directory, or uses `layerConfig`.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as NodeSwitchboard from "@switchboard/node/NodeSwitchboard"
 * import * as Effect from "effect/Effect"
 * import * as Redacted from "effect/Redacted"
 *
 * const program = Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).pipe(
 *   Effect.provide(NodeSwitchboard.layer({ baseUrl: "http://127.0.0.1:8787", apiKey: Redacted.make("sk-...") }))
 * )
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Services, ConfigurationError | JournalError> =>
  overUndici(SwitchboardConfig.layer(options), journalOf(options, memoryWithWarning), options)

/**
 * Reads `SWITCHBOARD_BASE_URL` and `SWITCHBOARD_API_KEY` from the environment.
 * Video tasks are journaled on disk unless `journalDirectory` or `journal`
 * says otherwise: in `SWITCHBOARD_JOURNAL_DIR`, else the user's state
 * directory (`NodeTaskJournal.defaultDirectory`, e.g.
 * `~/.local/state/switchboard/tasks`), opened at the first submission, so a
 * crashed process's tasks are there for `Videos.resumePending()` or
 * `switchboard video resume --journal <dir>`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Omit<Options, "baseUrl" | "apiKey"> = {}
): Layer.Layer<Services, ConfigurationError | JournalError | Config.ConfigError> =>
  overUndici(
    SwitchboardConfig.layerConfig(options),
    journalOf(options, Layer.unwrap(Effect.map(fromEnvironment(NodeTaskJournal.defaultDirectory), NodeTaskJournal.layerOnFirstUse))),
    options
  )

/**
 * A runtime holding every service, for programs that make many calls from
 * outside Effect (a server's handlers, a script's `await`s): its connection
 * pool is built once, on the first call, and shared by every call until
 * `dispose()`.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as NodeSwitchboard from "@switchboard/node/NodeSwitchboard"
 * import * as Redacted from "effect/Redacted"
 *
 * const main = async () => {
 *   const switchboard = NodeSwitchboard.runtime({ baseUrl: "http://127.0.0.1:8787", apiKey: Redacted.make("sk-...") })
 *   const reply = await switchboard.runPromise(Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }))
 *   await switchboard.dispose()
 *   return reply
 * }
 * ```
 * @since 0.1.0
 * @category runtime
 */
export const runtime = (options: Options): ManagedRuntime.ManagedRuntime<Services, ConfigurationError | JournalError> =>
  ManagedRuntime.make(layer(options))
