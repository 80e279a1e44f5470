#!/usr/bin/env node
/**
 * `switchboard-emulator [flags]`: runs the emulator until SIGINT or SIGTERM,
 * with the same faults and modes as `switchboard emulator` (`usage` lists
 * them; `docs/emulator.md` describes them).
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { parseArgs } from "node:util"
import * as CommandLine from "./CommandLine.js"
import * as Emulator from "./Emulator.js"

const usage = `usage: switchboard-emulator [--port 8787] [--api-key KEY] [--minimal] [--no-cors] [--cors-origin ORIGIN]...
       [--chunk-size N] [--interval 50ms] [--fault FAULT]... [--random-fault FAULT]... [--fault-rate SHARE]
       [--fault-seed N] [--fault-path PATH]... [--rate-limit REQUESTS/WINDOW[:tokens=N]]
FAULT: ${CommandLine.faultExamples}`

class UsageError extends Error {}

const orThrow = <A>(result: Result.Result<A, string>): A => Result.getOrThrowWith(result, (message) => new UsageError(message))

const whole = (flag: string, text: string | undefined, min: number): number | undefined => {
  if (text === undefined) return undefined
  if (!/^\d+$/.test(text) || Number(text) < min) throw new UsageError(`--${flag} must be a whole number of at least ${min}, not "${text}"`)
  return Number(text)
}

const options = (): Emulator.Options | "help" => {
  const { values } = parseArgs({
    options: {
      "port": { type: "string" },
      "api-key": { type: "string" },
      "minimal": { type: "boolean" },
      "no-cors": { type: "boolean" },
      "cors-origin": { type: "string", multiple: true },
      "chunk-size": { type: "string" },
      "interval": { type: "string" },
      "fault": { type: "string", multiple: true },
      "random-fault": { type: "string", multiple: true },
      "fault-rate": { type: "string" },
      "fault-seed": { type: "string" },
      "fault-path": { type: "string", multiple: true },
      "rate-limit": { type: "string" },
      "help": { type: "boolean", short: "h" }
    }
  })
  if (values.help) return "help"
  const port = values.port === undefined ? 8787 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError("--port must be an integer from 0 to 65535")
  const rate = values["fault-rate"] === undefined ? undefined : Number(values["fault-rate"])
  if (rate !== undefined && (values["fault-rate"]!.trim() === "" || Number.isNaN(rate))) {
    throw new UsageError(`--fault-rate must be from 0 to 1, not "${values["fault-rate"]}"`)
  }
  const faults = orThrow(CommandLine.faultOptions({
    script: (values.fault ?? []).map((spec) => orThrow(CommandLine.parseFault(spec))),
    random: (values["random-fault"] ?? []).map((spec) => orThrow(CommandLine.parseFault(spec))),
    rate,
    seed: whole("fault-seed", values["fault-seed"], 0),
    paths: values["fault-path"] ?? []
  }))
  const chunkSize = whole("chunk-size", values["chunk-size"], 1)
  const interval = values.interval === undefined ? undefined : CommandLine.millis(values.interval)
  if (values.interval !== undefined && interval === undefined) throw new UsageError(`--interval must be a duration such as 50ms or 1s, not "${values.interval}"`)
  return {
    port,
    ...(values["api-key"] === undefined ? {} : { apiKey: values["api-key"] }),
    ...(values.minimal === true ? { minimal: true } : {}),
    cors: orThrow(CommandLine.corsOption(values["no-cors"] === true, values["cors-origin"] ?? [])),
    faults,
    ...(values["rate-limit"] === undefined ? {} : { rateLimit: orThrow(CommandLine.parseRateLimit(values["rate-limit"])) }),
    stream: { ...(chunkSize === undefined ? {} : { chunkSize }), ...(interval === undefined ? {} : { interval }) }
  }
}

const fail = (message: string, code: number) =>
  Effect.andThen(Console.error(message), Effect.sync(() => process.exit(code)))

const main = Effect.try({ try: options, catch: (error) => error instanceof Error ? error : new UsageError(String(error)) }).pipe(
  Effect.flatMap((parsed) => parsed === "help" ? Console.log(usage) : Emulator.serve(parsed)),
  Effect.catchTag("ServeError", (error) =>
    fail(`switchboard-emulator: cannot listen on 127.0.0.1: ${error.cause instanceof Error ? error.cause.message : "unknown error"}`, 1)),
  Effect.catch((error) => fail(`switchboard-emulator: ${error.message}\n${usage}`, 2))
)

NodeRuntime.runMain(main)
