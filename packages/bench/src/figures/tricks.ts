/**
 * The speed tricks, re-measured on Effect 4: each hand-written shortcut
 * against what it replaced (`tricks.ts`, one process, alternated rounds),
 * and the own Node wire against `HttpClientWire` over undici and over fetch
 * (rows of the non-streaming and streaming figures of this run).
 */
import { fileURLToPath } from "node:url"
import { complete, type Context, type Figure } from "../lib/figure.js"
import { runScript } from "../lib/processes.js"
import { micros, num, range, ratio, type Table } from "../lib/stats.js"
import type { Trick } from "../tricks.js"

const id = "speed-tricks"
const title = "Speed tricks on Effect 4"
const rounds = 9

const script = fileURLToPath(new URL("../tricks.js", import.meta.url))

/** A shortcut pays when it saves a tenth or more. */
const pays = (trick: number, without: number) => (trick <= 0.9 * without ? "keep" : "no gain: remove")

const shortcuts = async (): Promise<Table | string> => {
  const run = await runScript([script, String(rounds)], { timeLimitMs: 120_000 })
  if (run.exitCode !== 0) return `the shortcut measurements failed: ${run.stderr.trim().split("\n").slice(-2).join(" ")}`
  const tricks = JSON.parse(run.stdout.trim().split("\n").pop()!) as ReadonlyArray<Trick>
  const us = (n: number) => (n < 10 ? `${n.toFixed(2)} µs` : micros(n))
  return {
    header: ["trick", "what", "with it (median)", "min–max", "without (median)", "min–max", "gain", "verdict"],
    numeric: [2, 3, 4, 5, 6],
    rows: tricks.map((t) => [
      t.name,
      t.what,
      us(t.trick.median),
      `${us(t.trick.min)}–${us(t.trick.max)}`,
      us(t.without.median),
      `${us(t.without.min)}–${us(t.without.max)}`,
      ratio(t.without.median / t.trick.median),
      pays(t.trick.median, t.without.median)
    ])
  }
}

/** The wire rows of a figure of this run, against its `NodeHttpWire` row. */
const wires = (context: Context, figureId: string, own: string, unit: string): Table | string => {
  const stats = context.results.get(figureId)?.stats
  if (stats === undefined) return `the ${figureId} figure did not run in this run`
  const base = stats.get(own)
  const labels = [own, "HttpClientWire over undici (A/B)", "HttpClientWire over fetch (A/B)"]
  return {
    header: ["wire", `${unit}/s (median)`, "min–max", "× NodeHttpWire", `CPU/${unit}`, "CPU × NodeHttpWire"],
    numeric: [1, 2, 3, 4, 5],
    rows: labels.map((label) => {
      const s = stats.get(label)
      if (!complete(s)) return [label, `failed: ${s?.error ?? "no run"}`, "", "", "", ""]
      return [
        label === own ? `NodeHttpWire (${own})` : label,
        num(s.rate.median),
        range(s.rate),
        complete(base) ? ratio(s.rate.median / base.rate.median) : "–",
        micros(s.cpuPerUnit.median),
        complete(base) ? ratio(s.cpuPerUnit.median / base.cpuPerUnit.median) : "–"
      ]
    })
  }
}

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const method =
      `Shortcuts: one process (\`packages/bench/dist/tricks.js\`), each shortcut and what it replaced timed in ${rounds} ` +
      "alternated rounds of about 20 ms each after a warm-up, medians and min–max of the time per operation. " +
      "The wires: the non-streaming and streaming figures of this run also run their `runPromise` / `runForEach` " +
      "client over `HttpClientWire` (`@switchboard/core/HttpClientWire`) with `@effect/platform-node`'s " +
      "`NodeHttpClient.layerUndici` and with `FetchHttpClient`, interleaved with the other clients."
    const table = await shortcuts()
    const parts: Array<{ readonly caption: string; readonly table: Table | string }> = [
      { caption: "Hand-written shortcuts against what they replaced (time per operation)", table },
      { caption: "The own Node wire against HttpClientWire: non-streaming `Chat.create`", table: wires(context, "non-streaming", "Switchboard (runPromise)", "request") },
      { caption: "The own Node wire against HttpClientWire: streaming `Chat.stream`", table: wires(context, "streaming", "Switchboard (runForEach)", "chunk") }
    ]
    return {
      id,
      title,
      method,
      tables: parts.flatMap(({ caption, table }) => (typeof table === "string" ? [] : [{ caption, table }])),
      verdicts: [],
      notes: parts.flatMap(({ caption, table }) => (typeof table === "string" ? [`${caption}: ${table}`] : [])),
      serverCores: undefined
    }
  }
}
