/**
 * `switchboard mcp`: the service as an MCP server for MCP hosts (editors,
 * desktop assistants, other agents), over stdio, or streamable HTTP with
 * `--http`. See `McpServe.ts`, imported when the command runs.
 *
 * @since 1.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import * as Connection from "../Connection.js"
import * as Errors from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { defaultJournal } from "./video.js"

/**
 * The SDK's services: the service the flags or the environment name, else
 * (or with `--emulator`) the embedded emulator, said on stderr.
 */
const serviceLayer = (flags: Connection.Flags & { readonly emulator: boolean }, journal: string) =>
  Effect.gen(function*() {
    const found = yield* Connection.lookup(flags)
    const service = Option.all({ baseUrl: found.baseUrl, apiKey: found.apiKey })
    if (!flags.emulator && Option.isSome(service)) {
      yield* Output.errorLine(`Service: ${service.value.baseUrl}`)
      return Connection.layerFrom(service.value, { journalDirectory: journal })
    }
    const { Emulator } = yield* Effect.promise(() => import("@switchboard/emulator"))
    yield* Output.errorLine("Service: the embedded emulator (set SWITCHBOARD_BASE_URL and SWITCHBOARD_API_KEY for the real one)")
    return Layer.unwrap(Effect.map(Emulator.Emulator, (emulator) =>
      Connection.layerFrom({ baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) }, { journalDirectory: journal })))
      .pipe(Layer.provide(Emulator.layer()))
  })

/**
 * @since 1.1.0
 * @category commands
 */
export const command = Command.make(
  "mcp",
  {
    http: Inputs.boolean("http").pipe(Flag.withDescription("Serve streamable HTTP at /mcp instead of stdio")),
    host: Inputs.text("host").pipe(Inputs.withDefault("127.0.0.1", "With --http: the address to listen on")),
    port: Inputs.port("port").pipe(Inputs.withDefault(8765, "With --http: the port, 0 for any free one")),
    allowedOrigin: Inputs.text("allowed-origin", "origin").pipe(
      Inputs.repeated("With --http: a browser origin allowed to call it (default: none; requests without Origin are allowed)")
    ),
    token: Flag.Redacted("token").pipe(
      Flag.withMetavar("token"),
      Flag.optional,
      Flag.withDescription("With --http: the bearer token clients must send (default: $SWITCHBOARD_MCP_TOKEN, else a new one, printed)")
    ),
    emulator: Inputs.boolean("emulator").pipe(Flag.withDescription("Serve the embedded emulator even when a service is configured")),
    journal: Inputs.text("journal").pipe(Flag.withMetavar("dir"), Inputs.withDefault(defaultJournal, "Directory of the video task journal")),
    pollInterval: Inputs.duration("poll-interval", Inputs.minimumPollInterval).pipe(
      Flag.withMetavar("duration"),
      Flag.optional,
      Flag.withDescription("Between two status polls of a video, e.g. 2s (default: the SDK's)")
    ),
    ...Connection.flags
  },
  (flags) =>
    Errors.reported(flags.verbose)(Effect.gen(function*() {
      const McpServe = yield* Effect.promise(() => import("../McpServe.js"))
      const fromEnv = process.env["SWITCHBOARD_MCP_TOKEN"]
      let token = Option.getOrUndefined(flags.token) ?? (fromEnv ? Redacted.make(fromEnv) : undefined)
      if (flags.http && token === undefined) {
        token = Redacted.make(randomBytes(24).toString("base64url"))
        yield* Output.errorLine(`Bearer token for this run (set --token or SWITCHBOARD_MCP_TOKEN to choose one): ${Redacted.value(token)}`)
      }
      const service = yield* serviceLayer(flags, flags.journal)
      return yield* McpServe.serve({
        http: flags.http,
        host: flags.host,
        port: flags.port,
        allowedOrigins: flags.allowedOrigin,
        token,
        journal: flags.journal,
        pollInterval: Option.getOrUndefined(flags.pollInterval)
      }, service)
    }))
).pipe(Command.withDescription("Serve the service as an MCP server (stdio, or streamable HTTP with --http)"))
