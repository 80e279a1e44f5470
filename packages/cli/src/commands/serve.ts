/**
 * `switchboard serve`: a chat page with an agent on 127.0.0.1 (see
 * `Serve.ts`, imported when the command runs: it brings the emulator, the
 * agent and the HTTP server, which other commands do not need).
 *
 * @since 1.0.0
 */
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Connection from "../Connection.js"
import * as Errors from "../Errors.js"
import * as Inputs from "../Inputs.js"

/**
 * @since 1.0.0
 * @category commands
 */
export const command = Command.make(
  "serve",
  {
    port: Inputs.port("port").pipe(Inputs.withDefault(3000, "Port on 127.0.0.1, 0 for any free port")),
    model: Inputs.text("model").pipe(Inputs.withDefault("gpt-4o-mini", "The agent's model")),
    ...Connection.flags
  },
  (flags) =>
    Errors.reported(flags.verbose)(
      Effect.flatMap(Effect.promise(() => import("../Serve.js")), (Serve) =>
        Serve.run({ port: flags.port, model: flags.model, baseUrl: flags.baseUrl, apiKey: flags.apiKey }))
    )
).pipe(
  Command.withDescription(
    "Serve a chat page with an agent (two tools, one asks for approval) on 127.0.0.1: the embedded emulator, or the service when SWITCHBOARD_BASE_URL and SWITCHBOARD_API_KEY are set"
  )
)
