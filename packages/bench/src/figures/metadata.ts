/**
 * What a call's response metadata costs (issue 37): the non-streaming
 * `Chat.create` as it is, with `Switchboard.withResponse` around it, and
 * with an `onResponse` hook, in one process (`metadata.ts`), rounds
 * rotated. The figure is client CPU per call, each round's against the
 * plain call of the same round.
 */
import { fileURLToPath } from "node:url"
import type { Context, Figure } from "../lib/figure.js"
import { runScript } from "../lib/processes.js"
import { median, micros, num, range, ratio, summarize, type Table } from "../lib/stats.js"

export const id = "metadata-overhead"
const title = "Per-call metadata overhead"

const script = fileURLToPath(new URL("../metadata.js", import.meta.url))

const what: Readonly<Record<string, string>> = {
  plain: "`runtime.runPromise(Chat.create(…))`: no metadata made for a success (an error's is)",
  withResponse: "`Switchboard.withResponse(Chat.create(…))`, the status read",
  "onResponse hook": "`Chat.create(…).pipe(Switchboard.withRequestOptions({ onResponse }))`, the hook reading the status"
}

const table = (perCall: Readonly<Record<string, ReadonlyArray<number>>>): Table => {
  const plain = perCall["plain"] ?? []
  return {
    header: ["call", "what", "CPU/call (median)", "min–max", "− plain, per round (median)", "× plain, per round (median)", "min–max"],
    numeric: [2, 3, 4, 5, 6],
    rows: Object.entries(perCall).map(([name, samples]) => {
      const ratios = samples.map((x, i) => x / plain[i]!)
      return [
        name,
        what[name] ?? "",
        micros(median(samples)),
        range(summarize(samples), micros),
        micros(median(samples.map((x, i) => x - plain[i]!))),
        ratio(median(ratios)),
        range(summarize(ratios), ratio)
      ]
    })
  }
}

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    // Short rounds, many of them: the three ways of a round meet about the same load.
    const rounds = context.settings.quick ? 15 : 61
    const calls = context.settings.quick ? 300 : 500
    const method =
      `One process (\`packages/bench/dist/metadata.js\`), one \`ManagedRuntime\` over \`NodeSwitchboard.layer\`: ${rounds} ` +
      `rounds of ${num(calls)} non-streaming \`Chat.create\` calls at concurrency 32 for each way of calling, their ` +
      "order rotated from round to round, after two warm-up rounds; client CPU (`process.cpuUsage()`, user + system) " +
      "per call. \"Per round\" sets each round's figure against the plain call's of the same round, then takes the " +
      "median: the load of a round falls on all three. Without a hook (or pacing) `Transport` makes no metadata for a " +
      "success; with one it builds the metadata (the headers redacted, the rate limits parsed) and runs the hook, and " +
      "`withResponse` adds its own hook and the tuple."
    const run = await runScript([script, String(context.server.port), String(rounds), String(calls)], { timeLimitMs: 600_000 })
    const failed = run.exitCode !== 0 ? `the measurement failed: ${run.stderr.trim().split("\n").slice(-2).join(" ")}` : undefined
    return {
      id,
      title,
      method,
      tables: failed === undefined ? [{ table: table(JSON.parse(run.stdout.trim().split("\n").pop()!)) }] : [],
      verdicts: [],
      notes: failed === undefined ? [] : [failed],
      serverCores: undefined
    }
  }
}
