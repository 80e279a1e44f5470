/**
 * Serving overhead: an agent's streamed answer served as the UI message
 * stream (`UiServer.agent` through its web handler) against `Agent.stream`
 * drained, per text part.
 */
import { complete, type Context, type Figure, interleave, maxServerCores, type Verdict } from "../lib/figure.js"
import { mb, micros, num, range, ratio } from "../lib/stats.js"

const id = "agent-serve"
const title = "Serving an agent stream"
/** Issue 36's target: serving costs at most 1.2 × the CPU of `Agent.stream` alone, per part. */
const target = 1.2

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const { stream, timeLimitMs } = context.settings
    const chunks = Math.min(stream.chunks, 2_000)
    const streams = stream.streams
    const method =
      `An agent's answer streamed in ${num(chunks)} text chunks (a toolkit without tools, so one model call): ` +
      "`Agent.stream` drained, against the same run served by `UiServer.agent` through `UiServer.toWebHandler` " +
      "(the body `useChat` posts decoded, events mapped onto UI message parts, SSE frames encoded, the `Response` " +
      `body read to its end, no socket). ${num(streams)} answers one after the other per run, after ` +
      `${num(stream.warmupStreams)} warm-up, ${stream.rounds} interleaved rounds. Cost is client CPU per text part.`
    const modes = [
      { label: "Agent.stream alone", mode: "agent-stream" as const },
      { label: "mapped and encoded (UiStream, no Response)", mode: "encoded" as const },
      { label: "served as the UI message stream", mode: "served" as const }
    ]
    const stats = await interleave(
      context,
      modes.map(({ label, mode }) => ({
        label,
        spec: { workload: "serve", mode, port: context.server.port, streams, chunks, warmupStreams: stream.warmupStreams, timeLimitMs } as const
      })),
      stream.rounds
    )
    const alone = stats.get(modes[0]!.label)
    const served = stats.get(modes[2]!.label)
    const rows = modes.map(({ label }) => {
      const s = stats.get(label)!
      if (!complete(s)) return [label, `failed: ${s.error ?? "no run"}`, "", "", "", ""]
      return [
        label,
        num(s.rate.median),
        range(s.rate),
        micros(s.cpuPerUnit.median),
        complete(alone) ? ratio(s.cpuPerUnit.median / alone.cpuPerUnit.median) : "–",
        mb(s.peakRss.median)
      ]
    })
    const ok = complete(alone) && complete(served)
    const verdicts: Array<Verdict> = [
      {
        target: `served: client CPU per part ≤ ${target} × Agent.stream alone`,
        measured: ok
          ? `${ratio(served.cpuPerUnit.median / alone.cpuPerUnit.median)} (${micros(served.cpuPerUnit.median)} vs ${micros(alone.cpuPerUnit.median)})`
          : (served?.error ?? alone?.error ?? "a run failed"),
        pass: ok && served.cpuPerUnit.median <= target * alone.cpuPerUnit.median
      }
    ]
    return {
      id,
      title,
      method,
      tables: [{
        table: {
          header: ["unit", "parts/s (median)", "min–max", "CPU/part", "CPU × Agent.stream", "peak RSS"],
          numeric: [1, 2, 3, 4, 5],
          rows
        }
      }],
      verdicts,
      notes: [],
      serverCores: maxServerCores(stats.values())
    }
  }
}
