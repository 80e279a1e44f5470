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
import * as Errors from "./Errors.js"
import * as Inputs from "./Inputs.js"

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("switchboard").pipe(
  Command.withDescription("Chat, images, video, embeddings and moderation from the terminal, through the Switchboard SDK"),
  Command.withSubcommands([
    Models.command,
    Chat.command,
    Image.command,
    Video.command,
    Embed.command,
    Moderate.command,
    Emulator.command,
    Demo.command
  ])
)

/**
 * @since 0.1.0
 * @category constants
 */
export const version = "0.1.0"

/**
 * The exit code of a run of `argv` (see `Errors`). Ctrl-C is how the
 * emulator is meant to stop, so there it exits 0; anywhere else 130.
 *
 * @since 0.1.0
 * @category running
 */
export const exitCode = (argv: ReadonlyArray<string>) => <A, E>(exit: Exit.Exit<A, E>): number => {
  const code = Errors.exitCode(exit)
  return code === Errors.ExitCode.interrupted && argv[2] === "emulator" ? Errors.ExitCode.ok : code
}

/**
 * Runs a command line (`process.argv`: node, script, then the arguments).
 * Usage errors are printed by @effect/cli, a command's errors by the command;
 * anything else is printed here.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>) =>
  Command.run(command, { name: "switchboard", version })(Video.expandShortForm(Inputs.normalizeArgs(argv))).pipe(
    Effect.tapErrorCause(Errors.reportUnexpected),
    Effect.provide(NodeContext.layer)
  )
