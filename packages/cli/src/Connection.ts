/**
 * Where the service is, for every command that talks to it: `--base-url` and
 * `--api-key` (or `--api-key-file`), else `SWITCHBOARD_BASE_URL` and
 * `SWITCHBOARD_API_KEY`; and the
 * one place that builds the Node layer from them and reports a command's
 * failure.
 *
 * @since 0.1.0
 */
import { TaskJournal } from "@switchboard/core"
import { NodeMedia, NodeSwitchboard } from "@switchboard/node"
import * as Flag from "effect/cli/Flag"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Errors from "./Errors.js"
import * as Inputs from "./Inputs.js"

/**
 * The flags every service command takes.
 *
 * @since 0.1.0
 * @category flags
 */
export const flags = {
  baseUrl: Inputs.text("base-url", "url").pipe(
    Flag.withDescription("The service's base address, e.g. http://127.0.0.1:8787 (default: $SWITCHBOARD_BASE_URL)"),
    Flag.optional
  ),
  apiKey: Flag.Redacted("api-key").pipe(
    Flag.withMetavar("key"),
    Flag.withDescription("The API key (default: $SWITCHBOARD_API_KEY; here it shows in the process list)"),
    Flag.optional
  ),
  apiKeyFile: Inputs.text("api-key-file").pipe(
    Flag.withMetavar("path"),
    Flag.withDescription("Read the API key from this file's first line (keeps it out of the process list)"),
    Flag.optional
  ),
  verbose: Inputs.boolean("verbose").pipe(Flag.withDescription("Print the details of an error"))
}

/**
 * The connection flags every command takes: `--base-url`, `--api-key`,
 * `--verbose`.
 *
 * @since 0.1.0
 * @category flags
 */
export interface Flags {
  readonly baseUrl: Option.Option<string>
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  /** `--api-key-file`: read when `--api-key` is not given, before the environment. */
  readonly apiKeyFile?: Option.Option<string> | undefined
  readonly verbose: boolean
}

/**
 * The service address and key a command uses, from its flags or the
 * environment.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
}

const nonEmpty = <A>(option: Option.Option<A>, value: (a: A) => string) =>
  Option.filter(option, (a) => value(a).trim() !== "")

const fromEnvironment = Config.all({
  baseUrl: Config.option(Config.String("SWITCHBOARD_BASE_URL")),
  apiKey: Config.option(Config.Redacted("SWITCHBOARD_API_KEY"))
}).pipe(Effect.orElseSucceed(() => ({ baseUrl: Option.none<string>(), apiKey: Option.none<Redacted.Redacted<string>>() })))

/** `--api-key`, else the first line of `--api-key-file` (both at once is a usage error). */
const keyOfFlags = (flags: Pick<Flags, "apiKey" | "apiKeyFile">) => {
  const given = nonEmpty(flags.apiKey, Redacted.value)
  const file = flags.apiKeyFile ?? Option.none()
  if (Option.isSome(given) && Option.isSome(file)) {
    return Effect.fail(new Errors.UsageError({ message: "--api-key and --api-key-file give the key twice: pass one" }))
  }
  return Option.isSome(file) ? Effect.asSome(Inputs.secretFile("api-key-file", file.value)) : Effect.succeed(given)
}

/**
 * Flags first (`--api-key`, else `--api-key-file`), then the environment;
 * `None` for what neither gives.
 *
 * @since 0.1.0
 * @category settings
 */
export const lookup = (flags: Pick<Flags, "baseUrl" | "apiKey" | "apiKeyFile">) =>
  Effect.zipWith(fromEnvironment, keyOfFlags(flags), (env, apiKey) => ({
    baseUrl: Option.orElse(nonEmpty(flags.baseUrl, String), () => nonEmpty(env.baseUrl, String)),
    apiKey: Option.orElse(apiKey, () => nonEmpty(env.apiKey, Redacted.value))
  }))

/**
 * The base URL and key, or a one-line error naming what to set.
 *
 * @since 0.1.0
 * @category settings
 */
export const settings = (
  flags: Pick<Flags, "baseUrl" | "apiKey" | "apiKeyFile">
): Effect.Effect<Settings, Errors.MissingConfigurationError | Errors.UsageError, FileSystem.FileSystem> =>
  Effect.flatMap(lookup(flags), ({ apiKey, baseUrl }) => {
    if (Option.isSome(baseUrl) && Option.isSome(apiKey)) return Effect.succeed({ baseUrl: baseUrl.value, apiKey: apiKey.value })
    const missing = [
      ...(Option.isNone(baseUrl) ? [["SWITCHBOARD_BASE_URL", "--base-url"] as const] : []),
      ...(Option.isNone(apiKey) ? [["SWITCHBOARD_API_KEY", "--api-key"] as const] : [])
    ]
    const what = missing.length === 2 ? "No base URL and no API key" : Option.isNone(baseUrl) ? "No base URL" : "No API key"
    return Effect.fail(
      new Errors.MissingConfigurationError({
        variables: missing.map(([variable]) => variable),
        message: `${what}: set ${missing.map(([variable]) => variable).join(" and ")} (or pass ${
          missing.map(([, flag]) => flag).join(" and ")
        }). To try things offline, run \`switchboard emulator\` in another terminal, or \`switchboard demo\`.`
      })
    )
  })

/**
 * What the commands' layer takes: where video tasks are kept.
 *
 * @since 0.1.0
 * @category layers
 */
export interface LayerOptions {
  /** Keep video tasks in this directory instead of in memory. */
  readonly journalDirectory?: string | undefined
}

/**
 * Every SDK service over Node, plus what saving media needs.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFrom = (settings: Settings, options: LayerOptions = {}) =>
  Layer.merge(
    NodeSwitchboard.layer({
      baseUrl: settings.baseUrl,
      apiKey: settings.apiKey,
      // Without a directory, a command submits no task, or keeps it in a
      // workflow's database (`--database`): memory is what it means.
      ...(options.journalDirectory === undefined ? { journal: TaskJournal.layerMemory } : { journalDirectory: options.journalDirectory })
    }),
    NodeMedia.layer
  )

/**
 * The layer for the flags, failing with `MissingConfigurationError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (flags: Pick<Flags, "baseUrl" | "apiKey" | "apiKeyFile">, options: LayerOptions = {}) =>
  Layer.unwrap(Effect.map(settings(flags), (s) => layerFrom(s, options)))

/**
 * The services a command program may use.
 *
 * @since 0.1.0
 * @category layers
 */
export type Services = Layer.Success<ReturnType<typeof layerFrom>>

/**
 * Runs a command's program with the SDK configured from its flags, printing
 * its failure as one line (with details under `--verbose`).
 *
 * @since 0.1.0
 * @category running
 */
export const run = <A, E, R>(
  flags: Flags,
  program: Effect.Effect<A, E, R>,
  options: LayerOptions = {}
): Effect.Effect<A, Errors.Reported, Exclude<R, Services> | FileSystem.FileSystem> =>
  program.pipe(Effect.provide(layer(flags, options)), Errors.reported(flags.verbose))
