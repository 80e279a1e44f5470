#!/usr/bin/env node
/**
 * The `switchboard` executable: exit code 0 when done, 1 for a failure of
 * the service or a task, 2 for a usage error, 130 when interrupted (0 for
 * the emulator, which Ctrl-C is meant to stop).
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cli from "./Cli.js"

NodeRuntime.runMain(Cli.run(process.argv), {
  disableErrorReporting: true,
  teardown: (exit, onExit) => onExit(Cli.exitCode(process.argv)(exit))
})
