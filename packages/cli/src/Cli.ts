/**
 * The `switchboard` command: its subcommands, and the run that turns a
 * command line into an exit code.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Chat from "./commands/chat.js"
import * as Demo from "./commands/demo.js"
import * as Embed from "./commands/embed.js"
import * as Emulator from "./commands/emulator.js"
import * as Image from "./commands/image.js"
import * as Models from "./commands/models.js"
import * as Moderate from "./commands/moderate.js"
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
  Worker.command
] as const

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("switchboard").pipe(
  Command.withDescription("Chat, images, video, embeddings and moderation from the terminal, through the Switchboard SDK"),
  Command.withSubcommands(subcommands)
)

/**
 * @since 0.1.0
 * @category constants
 */
export const version = "0.1.0"

/**
 * The exit code of a run of `argv` (see `Errors`). Ctrl-C is how the
 * emulator and a worker are meant to stop, so there it exits 0; anywhere else 130.
 *
 * @since 0.1.0
 * @category running
 */
export const exitCode = (argv: ReadonlyArray<string>) => <A, E>(exit: Exit.Exit<A, E>): number => {
  const code = Errors.exitCode(exit)
  return code === Errors.ExitCode.interrupted && (argv[2] === "emulator" || argv[2] === "worker") ? Errors.ExitCode.ok : code
}

/**
 * @effect/cli prints its usage errors through `Console.error`, as a block
 * with a blank line; they are printed here instead, as one line (see
 * `Errors.reportUnexpected`). Commands write to the streams directly.
 */
const withoutParserErrors = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.console, (console) =>
    Effect.withConsole(effect, {
      ...console,
      error: () => Effect.void,
      unsafe: { ...console.unsafe, error: () => {} }
    }))

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
  const args = Video.expandShortForm(Inputs.normalizeArgs(argv))
  // No command at all is a request for help too (@effect/cli would print its own).
  const program = Help.requested(args.slice(2)) || args.length <= 2
    ? Help.print(
      { name: "switchboard", version, descriptor: command.descriptor },
      subcommands.map((c) => c.descriptor),
      args.slice(2)
    )
    // @effect/cli prints the version as a paragraph, with a blank line after it.
    : args.length === 3 && args[2] === "--version"
    ? Output.line(version)
    : withoutParserErrors(Command.run(command, { name: "switchboard", version })(args))
  return program.pipe(
    Effect.tapErrorCause(Errors.reportUnexpected),
    Effect.provide(NodeContext.layer)
  )
}
