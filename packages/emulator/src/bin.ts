#!/usr/bin/env node
/**
 * `switchboard-emulator [--port 8787] [--api-key KEY] [--minimal]`: runs the emulator
 * until SIGINT or SIGTERM.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { parseArgs } from "node:util"
import * as Emulator from "./Emulator.js"

const usage = "usage: switchboard-emulator [--port 8787] [--api-key KEY] [--minimal]"

class UsageError extends Error {}

const options = (): Emulator.Options | "help" => {
  const { values } = parseArgs({
    options: {
      "port": { type: "string" },
      "api-key": { type: "string" },
      "minimal": { type: "boolean" },
      "help": { type: "boolean", short: "h" }
    }
  })
  if (values.help) return "help"
  const port = values.port === undefined ? 8787 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port must be an integer from 0 to 65535")
  return {
    port,
    ...(values["api-key"] === undefined ? {} : { apiKey: values["api-key"] }),
    ...(values.minimal === true ? { minimal: true } : {})
  }
}

const fail = (message: string, code: number) =>
  Effect.zipRight(Console.error(message), Effect.sync(() => process.exit(code)))

const main = Effect.try({ try: options, catch: (error) => error instanceof Error ? error : new UsageError(String(error)) }).pipe(
  Effect.flatMap((parsed) => parsed === "help" ? Console.log(usage) : Emulator.serve(parsed)),
  Effect.catchTag("ServeError", (error) =>
    fail(`switchboard-emulator: cannot listen on 127.0.0.1: ${error.cause instanceof Error ? error.cause.message : "unknown error"}`, 1)),
  Effect.catchAll((error) => fail(`switchboard-emulator: ${error.message}\n${usage}`, 2))
)

NodeRuntime.runMain(main)
