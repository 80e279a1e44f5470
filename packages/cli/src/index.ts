/**
 * The `switchboard` command as a library: its command tree, each command's
 * program, the demo, and the error reporting.
 *
 * @since 0.1.0
 */
export * as Cli from "./Cli.js"
export * as Connection from "./Connection.js"
export * as Demo from "./Demo.js"
export * as Errors from "./Errors.js"
export * as Inputs from "./Inputs.js"
export * as Output from "./Output.js"
export * as Progress from "./Progress.js"
