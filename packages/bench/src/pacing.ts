/**
 * `pnpm bench:pacing [rounds]` (default 3): 100 concurrent agent steps against the emulator's
 * limit mode (20 requests a second), without and with `Pacing.layer`; the
 * 429s the service answered, the runs that failed, and the wall time.
 * Prints the section "Pacing from the rate limits" and writes it into
 * docs/performance.md (`--no-write`: prints only); `pnpm bench` keeps it
 * (`lib/sections.ts`).
 */
import { Agent } from "@switchboard/agent"
import { Pacing, type ResponseMetadata, Switchboard } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { performance } from "node:perf_hooks"
import { measured, ownSections, publish, roundsArg } from "./lib/sections.js"

const steps = 100
const rateLimit = { requests: 20, window: "1 second" } as const
const rounds = roundsArg(3)
const toolkit = Toolkit.make()

interface Outcome {
  readonly refused: number
  readonly failed: number
  readonly millis: number
}

const once = (paced: boolean): Promise<Outcome> =>
  Effect.gen(function*() {
    const emulator = yield* Emulator.Emulator
    let refused = 0
    const onResponse = (response: ResponseMetadata.ResponseMetadata) =>
      Effect.sync(() => {
        if (response.status === 429) refused += 1
      })
    const step = Agent.run({ model: "gpt-4o-mini", toolkit, messages: [{ role: "user", content: "Hello" }] }).pipe(
      Switchboard.withRequestOptions({ onResponse }),
      Effect.provide(NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey })),
      Effect.result
    )
    const started = performance.now()
    const results = yield* Effect.all(Array.from({ length: steps }, () => step), { concurrency: "unbounded" }).pipe(
      paced ? Effect.provide(Pacing.layer) : (self) => self
    )
    const millis = performance.now() - started
    return { refused, failed: results.filter((r) => r._tag === "Failure").length, millis }
  }).pipe(Effect.provide(Layer.fresh(Emulator.layer({ rateLimit }))), Effect.runPromise)

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const own = ownSections[0]

const main = async () => {
  const runs: Record<"off" | "on", Array<Outcome>> = { off: [], on: [] }
  // Interleaved, so that load on the machine falls on both alike.
  for (let round = 0; round < rounds; round++) {
    runs.off.push(await once(false))
    runs.on.push(await once(true))
  }
  const row = (label: string, outcomes: ReadonlyArray<Outcome>) =>
    `| ${label} | ${outcomes.map((o) => o.refused).join(", ")} | ${outcomes.map((o) => o.failed).join(", ")} | ${
      (median(outcomes.map((o) => o.millis)) / 1000).toFixed(2)
    } (${outcomes.map((o) => (o.millis / 1000).toFixed(2)).join(", ")}) |`
  const section = [
    own.title,
    "",
    `${measured(own)} ${steps} agent steps ` +
      "(`Agent.run`, one model call each) started at once against the emulator in limit mode " +
      `(\`rateLimit: { requests: ${rateLimit.requests}, window: "${rateLimit.window}" }\`: the window opens at its first ` +
      "request; past its requests, a 429 with `retry-after` until it ends), each run on a fresh emulator, " +
      `${rounds} interleaved round${rounds === 1 ? "" : "s"}. The 429s are the replies with that status (\`RequestOptions.onResponse\`); a run ` +
      "fails when its retries (default `maxRetries` 2) meet 429s too. Wall time is from the start to the last step's end, " +
      "failed ones included. `docs/metadata-and-pacing.md` says how pacing decides.",
    "",
    "| 100 concurrent agent steps, limit 20 requests / 1 s | 429s per round | failed runs per round | wall s, median (rounds) |",
    "|---|---:|---:|---:|",
    row("without pacing", runs.off),
    row("with `Pacing.layer`", runs.on),
    ""
  ].join("\n")
  publish(section)
}

await main()
