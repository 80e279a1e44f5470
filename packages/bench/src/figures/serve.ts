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

/** What keeps the served path lean (measured in docs/decisions.md, "Serving an agent stream"). */
const note = "**What keeps serving lean.** `UiServer.agent` has the run write its frames: `UiStream.encodeAgent` " +
  "given the stream `Agent.stream` made runs the loop itself, each event's frames written to a string as it comes " +
  "(no queue between the run and the frames, no part object per text delta, a text part's frame prefix made once), " +
  "and a pull takes and encodes everything written since the previous one (the same bytes as " +
  "`encode(fromAgent(...))`, compared by tests). Without the queue, served cost 1.07–1.11 × `Agent.stream` alone " +
  "in three runs of this figure, against 1.19–1.22 × for the previous build alternated with it " +
  "(docs/decisions.md, \"the frames written by the run\"). `UiServer` provides the " +
  "handler's context to the body once, not at every pull (`Stream.provideContext` copies every service at each), and " +
  "only the services the running context lacks (none through `toWebHandler`); per request it reads the page's body in " +
  "one stage and hands the request's scope to the body's own fiber (docs/decisions.md, \"less made per request\"). " +
  "`UiServer.toWebHandler` gives the body its own `ReadableStream`: a read gets every chunk made since the previous " +
  "read in one (a chunk made while a read waits goes at once; nothing is held back), where " +
  "`Stream.toReadableStreamWith` hands one chunk per read. Earlier rounds: 1.52–1.56 × before the body, the context " +
  "and a larger queue, 1.12–1.28 × after them and the frames from the events (docs/decisions.md). The ratio moves " +
  "with the machine's load: compare within one run."

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const { stream, timeLimitMs } = context.settings
    const chunks = Math.min(stream.chunks, 2_000)
    const streams = stream.streams
    // A served answer is ~10 ms of work: 2 warm-up answers and 5 rounds left the verdict to the JIT and the
    // machine (1.18 × and 1.41 × in two runs at load 9-10), so this figure warms up longer and runs more rounds.
    const warmupStreams = Math.max(stream.warmupStreams, 20)
    const rounds = Math.max(stream.rounds, context.settings.quick ? 3 : 9)
    const method =
      `An agent's answer streamed in ${num(chunks)} text chunks (a toolkit without tools, so one model call): ` +
      "`Agent.stream` drained, against the same run served by `UiServer.agent` through `UiServer.toWebHandler` " +
      "(the body `useChat` posts decoded, events written as SSE frames by `UiStream.encodeAgent`, the `Response` " +
      `body read to its end, no socket). ${num(streams)} answers one after the other per run, after ` +
      `${num(warmupStreams)} warm-up, ${rounds} interleaved rounds. Cost is client CPU per text part.`
    const modes = [
      { label: "Agent.stream alone", mode: "agent-stream" as const },
      { label: "frames written (UiStream.encodeAgent, no Response)", mode: "encoded" as const },
      { label: "served as the UI message stream", mode: "served" as const }
    ]
    const stats = await interleave(
      context,
      modes.map(({ label, mode }) => ({
        label,
        spec: { workload: "serve", mode, port: context.server.port, streams, chunks, warmupStreams, timeLimitMs } as const
      })),
      rounds
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
      notes: [note],
      serverCores: maxServerCores(stats.values())
    }
  }
}
