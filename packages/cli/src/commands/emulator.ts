/**
 * `switchboard emulator`: the emulator of the service on 127.0.0.1, until
 * Ctrl-C. The emulator is imported when the command runs, so that other
 * commands do not load it.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
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

/**
 * Serves until interrupted, after saying how to point the CLI at it.
 *
 * @since 0.1.0
 * @category programs
 */
export const serve = (options: { readonly port: number; readonly apiKey: string }) =>
  Effect.flatMap(Effect.promise(() => import("@switchboard/emulator")), ({ Emulator }) =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* Output.line(`Switchboard emulator listening on ${emulator.url}/v1`)
      yield* Output.line(Output.dim("Point the CLI (or any chat-completions client) at it from another terminal:"))
      yield* Output.line(`  export SWITCHBOARD_BASE_URL=${emulator.url} SWITCHBOARD_API_KEY=${emulator.apiKey}`)
      yield* Output.line("  switchboard models")
      yield* Output.line(Output.dim("Ctrl-C stops it."))
      return yield* Effect.never
    }).pipe(Effect.provide(Emulator.layer({ port: options.port, apiKey: options.apiKey }))))

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "emulator",
  {
    port: Inputs.port("port").pipe(Inputs.withDefault(8787, "Port on 127.0.0.1, 0 for any free port")),
    apiKey: Options.text("api-key").pipe(Options.withPseudoName("key"), Inputs.withDefault(defaultApiKey, "The key clients must send"))
  },
  (options) => Errors.reported(false)(serve(options))
).pipe(Command.withDescription("Serve the emulator of the service on 127.0.0.1"))
