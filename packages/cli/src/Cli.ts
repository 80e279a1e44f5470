/**
 * The `switchboard` command: its subcommands, and the run that turns a
 * command line into an exit code.
 *
 * @since 0.1.0
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as CliConfig from "effect/cli/CliConfig"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Chat from "./commands/chat.js"
import * as Demo from "./commands/demo.js"
import * as Embed from "./commands/embed.js"
import * as Emulator from "./commands/emulator.js"
import * as Image from "./commands/image.js"
import * as Mcp from "./commands/mcp.js"
import * as Models from "./commands/models.js"
import * as Moderate from "./commands/moderate.js"
import * as Serve from "./commands/serve.js"
import * as Video from "./commands/video.js"
import * as Worker from "./commands/worker.js"
import * as Errors from "./Errors.js"
import * as Help from "./Help.js"
import * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"

/**
 * The subcommands, in the order `--help` lists them.
 *
 * @since 0.1.0
 * @category commands
 */
export const subcommands = [
  Models.command,
  Chat.command,
  Image.command,
  Video.command,
  Embed.command,
  Moderate.command,
  Emulator.command,
  Demo.command,
  Serve.command,
  Worker.command,
  Mcp.command
] as const

/**
 * The `switchboard` command with all its subcommands, for `Command.run`.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("switchboard").pipe(
  Command.withDescription("Chat, images, video, embeddings and moderation from the terminal, through the Switchboard SDK"),
  Command.withSubcommands(subcommands)
)

/**
 * The CLI's version, as `switchboard --version` prints it.
 *
 * @since 0.1.0
 * @category constants
 */
export const version = "1.0.0"

/**
 * The exit code of a run of `argv` (see `Errors`). Ctrl-C is how the
 * emulator, a worker and `serve` are meant to stop, so there it exits 0; anywhere else 130.
 *
 * @since 0.1.0
 * @category running
 */
export const exitCode = (argv: ReadonlyArray<string>) => <A, E>(exit: Exit.Exit<A, E>): number => {
  const code = Errors.exitCode(exit)
  return code === Errors.ExitCode.interrupted && (argv[2] === "emulator" || argv[2] === "worker" || argv[2] === "serve" || argv[2] === "mcp") ? Errors.ExitCode.ok : code
}

/**
 * Help is laid out by `Help`, the version printed alone; usage errors are
 * not presented here (effect/cli would print the help and the errors) but
 * as one line each by `Errors.reportUnexpected`.
 */
const presenter: CliOutput.Presenter = {
  present: (event) => {
    switch (event._tag) {
      case "Help":
        return Output.write(`${Help.render(Help.screen(event.helpDoc, event.commandPath.length === 1 ? version : undefined))}\n`)
      case "Version":
        return Output.line(event.version)
      case "InvalidInvocation":
        return Effect.void
    }
  }
}

/** Of effect/cli's built-in flags, only --help and --version (no completions, wizard or log level). */
const config = CliConfig.make({ builtIns: [GlobalFlag.Help, GlobalFlag.Version] })

const parse = Command.runWith(command, { version })

/**
 * Runs a command line (`process.argv`: node, script, then the arguments).
 * `--help` is laid out by `Help`, usage errors and failures nobody printed
 * are printed here (`Errors.reportUnexpected`), a command's by the command.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>) => {
  // `video "<prompt>"` is short for `video generate "<prompt>"`.
  const args = Video.expandShortForm(Inputs.normalizeArgs(argv)).slice(2)
  // No command at all is a request for help too.
  return parse(args.length === 0 ? ["--help"] : args).pipe(
    Effect.tapCause(Errors.reportUnexpected),
    Effect.provideService(CliOutput.Presenter, presenter),
    Effect.provideService(CliConfig.CliConfig, config),
    Effect.provide(NodeServices.layer)
  )
}
