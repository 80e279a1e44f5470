/**
 * Memory of a long stream: peak RSS of one stream of a million chunks against
 * one of ten thousand, through `Chat.stream`.
 */
import { complete, type Context, type Figure, interleave, maxServerCores } from "../lib/figure.js"
import type { StreamClient } from "../lib/ipc.js"
import { mb, num, range } from "../lib/stats.js"

const id = "stream-memory"
const title = "Memory of a long stream"
const limitMb = 30

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const { memory, timeLimitMs } = context.settings
    const method =
      `One stream of ${num(memory.large)} chunks against one of ${num(memory.small)}, each in a fresh process ` +
      `(no warm-up), ${memory.rounds} interleaved round(s); peak RSS as in the RSS figure. Switchboard consumes the ` +
      "stream with `Stream.runForEach`; the raw SSE parser is shown for reference."
    const runs: ReadonlyArray<{ label: string; client: StreamClient; chunks: number }> = [
      { label: `Switchboard, ${num(memory.small)} chunks`, client: "switchboard", chunks: memory.small },
      { label: `Switchboard, ${num(memory.large)} chunks`, client: "switchboard", chunks: memory.large },
      { label: `raw SSE parser, ${num(memory.small)} chunks`, client: "undici-sse", chunks: memory.small },
      { label: `raw SSE parser, ${num(memory.large)} chunks`, client: "undici-sse", chunks: memory.large }
    ]
    const stats = await interleave(
      context,
      runs.map(({ chunks, client, label }) => ({
        label,
        spec: { workload: "stream", client, port: context.server.port, streams: 1, chunks, warmupStreams: 0, timeLimitMs }
      })),
      memory.rounds
    )
    const rows = runs.map(({ label }) => {
      const s = stats.get(label)!
      if (!complete(s)) return [label, `failed: ${s.error ?? "no run"}`, "", ""]
      return [label, mb(s.peakRss.median), range(s.peakRss, mb), num(s.rate.median)]
    })
    const small = stats.get(runs[0]!.label)
    const large = stats.get(runs[1]!.label)
    const ok = complete(small) && complete(large)
    const growth = ok ? (large.peakRss.median - small.peakRss.median) / (1024 * 1024) : Number.NaN
    return {
      id,
      title,
      method,
      tables: [{ table: { header: ["stream", "peak RSS (median)", "min–max", "chunks/s"], numeric: [1, 2, 3], rows } }],
      verdicts: [{
        target: `Switchboard: peak RSS of ${num(memory.large)} chunks within ${limitMb} MB of ${num(memory.small)} chunks`,
        measured: ok ? `${growth >= 0 ? "+" : ""}${num(growth)} MB` : (large?.error ?? small?.error ?? "a run failed"),
        pass: ok && growth <= limitMb
      }],
      notes: [],
      serverCores: maxServerCores(stats.values())
    }
  }
}
