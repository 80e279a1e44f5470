/**
 * The `switchboard` command as a library: its command tree, each command's
 * program, the demo, and the error reporting.
 *
 * @since 0.1.0
 */
export * as Cli from "./Cli.js"
/**
 * Where the service is, for every command that talks to it.
 *
 * @since 0.1.0
 */
export * as Connection from "./Connection.js"
/**
 * `switchboard demo`.
 *
 * @since 0.1.0
 */
export * as Demo from "./Demo.js"
/**
 * Every failure of a command as one readable line on stderr (more with
 * `--verbose`), and the exit code it gives.
 *
 * @since 0.1.0
 */
export * as Errors from "./Errors.js"
/**
 * Flags and arguments shared by several commands.
 *
 * @since 0.1.0
 */
export * as Inputs from "./Inputs.js"
/**
 * Terminal output shared by the commands.
 *
 * @since 0.1.0
 */
export * as Output from "./Output.js"
/**
 * The progress of a video task while it is polled.
 *
 * @since 0.1.0
 */
export * as Progress from "./Progress.js"
