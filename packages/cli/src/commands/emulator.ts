/**
 * `switchboard emulator`: the emulator of the service on 127.0.0.1, until
 * Ctrl-C, with its faults and modes as flags. The emulator is imported when
 * the command runs (or its fault flags are read), so that other commands do
 * not load it.
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import type { Emulator as EmulatorModule } from "@switchboard/emulator"
import type * as CommandLine from "@switchboard/emulator/CommandLine"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Errors from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/**
 * The key the emulator expects by default: `Emulator.defaultApiKey`, written
 * out so that parsing the command line does not load the emulator.
 *
 * @since 0.1.0
 * @category defaults
 */
export const defaultApiKey = "sk-emulator"

const commandLine = Effect.promise(() => import("@switchboard/emulator/CommandLine"))

const invalid = (name: string, message: string) => Inputs.invalid(`--${name}: ${message}`)

/** A repeatable flag of faults, each parsed as it is typed. */
const faults = (name: string, description: string) =>
  Inputs.text(name, "fault").pipe(
    Inputs.repeated(description),
    Flag.mapEffect((specs) =>
      Effect.flatMap(commandLine, ({ parseFault }) =>
        Effect.forEach(specs, (spec) => Result.match(parseFault(spec), { onFailure: (e) => invalid(name, e), onSuccess: Effect.succeed })))
    )
  )

/** `--rate-limit 20/1s[:tokens=N]`: limit mode, parsed as it is typed. */
const rateLimit = (name: string) =>
  Flag.mapEffect(Inputs.text(name, "requests/window"), (spec) =>
    Effect.flatMap(commandLine, ({ parseRateLimit }) =>
      Result.match(parseRateLimit(spec), { onFailure: (e) => invalid(name, e), onSuccess: Effect.succeed })))

const fraction = (name: string) =>
  Flag.mapEffect(Inputs.text(name, "share"), (text) => {
    const n = Number(text)
    return text.trim() !== "" && n >= 0 && n <= 1 ? Effect.succeed(n) : invalid(name, `"${text}" is not a share from 0 to 1, e.g. 0.2`)
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface Flags {
  readonly port: number
  readonly apiKey: string
  readonly minimal: boolean
  readonly noCors: boolean
  readonly corsOrigin: ReadonlyArray<string>
  readonly chunkSize: Option.Option<number>
  readonly interval: Option.Option<Duration.Duration>
  readonly fault: ReadonlyArray<CommandLine.FaultFlags["script"][number]>
  readonly randomFault: ReadonlyArray<CommandLine.FaultFlags["script"][number]>
  readonly faultRate: Option.Option<number>
  readonly faultSeed: Option.Option<number>
  readonly faultPath: ReadonlyArray<string>
  readonly rateLimit: Option.Option<{ readonly requests: number; readonly tokens?: number; readonly window: number }>
}

/** The emulator's options from the flags, or the usage error of flags that do not go together. */
const optionsOf = (flags: Flags) =>
  Effect.flatMap(commandLine, (cli) => {
    const faults = cli.faultOptions({
      script: flags.fault,
      random: flags.randomFault,
      rate: Option.getOrUndefined(flags.faultRate),
      seed: Option.getOrUndefined(flags.faultSeed),
      paths: flags.faultPath
    })
    const cors = cli.corsOption(flags.noCors, flags.corsOrigin)
    if (Result.isFailure(faults)) return Effect.fail(new Errors.UsageError({ message: faults.failure }))
    if (Result.isFailure(cors)) return Effect.fail(new Errors.UsageError({ message: cors.failure }))
    const options: EmulatorModule.Options = {
      port: flags.port,
      apiKey: flags.apiKey,
      minimal: flags.minimal,
      cors: cors.success,
      faults: faults.success,
      ...Option.match(flags.rateLimit, { onNone: () => ({}), onSome: (rateLimit) => ({ rateLimit }) }),
      stream: {
        ...Option.match(flags.chunkSize, { onNone: () => ({}), onSome: (chunkSize) => ({ chunkSize }) }),
        ...Option.match(flags.interval, { onNone: () => ({}), onSome: (interval) => ({ interval }) })
      }
    }
    return Effect.succeed(options)
  })

/** One line on the faults and modes in force, when any is. */
const summary = (flags: Flags): ReadonlyArray<string> => {
  const modes = [
    flags.minimal ? "minimal replies" : undefined,
    flags.noCors ? "no CORS" : flags.corsOrigin.length > 0 ? `CORS for ${flags.corsOrigin.join(", ")}` : undefined,
    Option.isSome(flags.chunkSize) ? `stream chunks of ${flags.chunkSize.value} characters` : undefined,
    Option.isSome(flags.interval) ? "paced streams" : undefined,
    Option.isSome(flags.rateLimit) ? `limit mode, ${flags.rateLimit.value.requests} requests per ${flags.rateLimit.value.window} ms` : undefined
  ].filter((m) => m !== undefined)
  const faults = [
    flags.fault.length > 0 ? `the next ${flags.fault.length} ${flags.fault.length === 1 ? "request gets" : "requests get"} a scripted fault` : undefined,
    Option.isSome(flags.faultRate) ? `${Math.round(flags.faultRate.value * 100)}% of requests a random one` : undefined,
    flags.faultPath.length > 0 ? `only on ${flags.faultPath.join(", ")}` : undefined
  ].filter((f) => f !== undefined)
  return [
    ...(modes.length > 0 ? [`Modes: ${modes.join("; ")}.`] : []),
    ...(faults.length > 0 ? [`Faults: ${faults.join("; ")}.`] : [])
  ]
}

/**
 * Serves until interrupted, after saying how to point the CLI at it.
 *
 * @since 0.1.0
 * @category programs
 */
export const serve = (options: EmulatorModule.Options, notes: ReadonlyArray<string> = []) =>
  Effect.flatMap(Effect.promise(() => import("@switchboard/emulator")), ({ Emulator }) =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* Output.line(`Switchboard emulator listening on ${emulator.url}/v1`)
      for (const note of notes) yield* Output.line(note)
      yield* Output.line(Output.dim("Point the CLI (or any chat-completions client) at it from another terminal:"))
      yield* Output.line(`  export SWITCHBOARD_BASE_URL=${emulator.url} SWITCHBOARD_API_KEY=${emulator.apiKey}`)
      yield* Output.line("  switchboard models")
      yield* Output.line(Output.dim("Ctrl-C stops it."))
      return yield* Effect.never
    }).pipe(Effect.provide(Emulator.layer(options))))

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "emulator",
  {
    port: Inputs.port("port").pipe(Inputs.withDefault(8787, "Port on 127.0.0.1, 0 for any free port")),
    apiKey: Inputs.text("api-key").pipe(Flag.withMetavar("key"), Inputs.withDefault(defaultApiKey, "The key clients must send")),
    minimal: Inputs.boolean("minimal").pipe(Flag.withDescription("Answer with the bare shapes of the service contract and nothing more")),
    noCors: Inputs.boolean("no-cors").pipe(Flag.withDescription("Answer no CORS preflight, send no CORS headers")),
    corsOrigin: Inputs.text("cors-origin", "origin").pipe(
      Inputs.repeated("A web page origin allowed to call it, e.g. http://localhost:5173, or * for any (default: pages on this machine)")
    ),
    chunkSize: Inputs.atLeast("chunk-size", 1).pipe(Flag.optional, Flag.withDescription("Characters per streamed chunk (default 4)")),
    interval: Inputs.duration("interval").pipe(Flag.withMetavar("duration"), Flag.optional, Flag.withDescription("Pause between streamed events, e.g. 50ms (default none)")),
    fault: faults("fault", "A fault for the next request, in order: 429, 503:retry-after=2, delay=2s, reset, truncate=0.3, cut-stream=3…"),
    randomFault: faults("random-fault", "A fault --fault-rate picks from"),
    faultRate: fraction("fault-rate").pipe(Flag.optional, Flag.withDescription("Share of requests faulted at random once the script is used up, 0 to 1")),
    faultSeed: Inputs.integer("fault-seed").pipe(Flag.optional, Flag.withDescription("Seed of the random faults: the same seed gives the same faults (default 0)")),
    faultPath: Inputs.text("fault-path", "path").pipe(
      Inputs.repeated("Only requests to this path get faults, e.g. /v1/chat/completions (default: all)")
    ),
    rateLimit: rateLimit("rate-limit").pipe(
      Flag.optional,
      Flag.withDescription("Limit mode: requests per window, then 429s until it resets, e.g. 20/1s or 100/1m:tokens=50000")
    )
  },
  (flags) => Errors.reported(false)(Effect.flatMap(optionsOf(flags), (options) => serve(options, summary(flags))))
).pipe(Command.withDescription("Serve the emulator of the service on 127.0.0.1, with faults and modes to test clients against"))
