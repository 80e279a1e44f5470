/**
 * Many open streams at once, as a backend relaying answers to many users
 * has: memory per open stream and chunks/s, against the official client and
 * the raw parser.
 */
import { complete, type Context, effect3Client, type Figure, interleave, maxServerCores, type RunSample, type Verdict } from "../lib/figure.js"
import { kb, mb, median, micros, num, range, ratio, summarize } from "../lib/stats.js"

const id = "open-streams"
const title = "Many open streams"

const clients = [
  { label: "raw SSE parser", client: "undici-sse", what: "`undici.request`, hand-written `data:` line parser, `JSON.parse`" },
  { label: "openai", client: "openai", what: "official client, `for await (const chunk of stream)` per stream" },
  {
    label: "Switchboard",
    client: "switchboard",
    what: "`Effect.forEach(…, { concurrency: \"unbounded\" })` of `Chat.stream` + `Stream.runForEach`, every chunk schema-validated"
  },
  { label: "Effect 3 edition", client: "switchboard", what: "the same client at `2ccd179`", effect3: true }
] as const

/** The Effect 4 edition's target (1.2 on the 3 line, never met there). */
const memoryTarget = 1.5

/** Memory the timed section took per open stream: peak RSS during it less RSS before it. */
const perStream = (sample: RunSample, streams: number) =>
  (Number(sample.extra["rssPeak"]) - Number(sample.extra["rssBefore"])) / streams

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const { openStreams, timeLimitMs } = context.settings
    const method =
      `${num(openStreams.streams)} streams of ${openStreams.chunks} chunks opened at once and read to the end, after ` +
      `${openStreams.warmupStreams} warm-up streams, ${openStreams.rounds} interleaved rounds, a fresh process per run ` +
      "(with `--expose-gc`). The server writes each stream 10 events at a time and yields between writes, so every " +
      "stream stays open while the others advance. Memory per open stream is the peak RSS during the timed section " +
      "(sampled every 5 ms) less the RSS just before it (after a forced collection), divided by the streams. Every client " +
      "counts each stream's chunks and checks `finish_reason` on the last; Switchboard decodes each chunk with its schema."
    const stats = await interleave(
      context,
      clients.map((c) => {
        const spec = {
          workload: "concurrent-streams",
          client: c.client,
          port: context.server.port,
          streams: openStreams.streams,
          chunks: openStreams.chunks,
          warmupStreams: openStreams.warmupStreams,
          timeLimitMs
        } as const
        return "effect3" in c ? effect3Client(context, c.label, spec) : { label: c.label, spec }
      }),
      openStreams.rounds,
      { execArgv: ["--expose-gc"] }
    )
    const memory = new Map(
      [...stats].map(([label, s]) => [label, summarize(s.samples.map((sample) => perStream(sample, openStreams.streams)))])
    )
    const raw = stats.get("raw SSE parser")
    const openai = stats.get("openai")
    const rawMemory = memory.get("raw SSE parser")!.median
    const rows = clients.map(({ label, what }) => {
      const s = stats.get(label)!
      if (!complete(s)) return [label, what, `failed: ${s.error ?? "no run"}`, "", "", "", "", "", "", "", ""]
      const m = memory.get(label)!
      return [
        label,
        what,
        num(s.rate.median),
        range(s.rate),
        complete(raw) ? ratio(s.rate.median / raw.rate.median) : "–",
        complete(openai) ? ratio(s.rate.median / openai.rate.median) : "–",
        micros(s.cpuPerUnit.median),
        mb(median(s.samples.map((sample) => Number(sample.extra["rssBefore"])))),
        mb(s.peakRss.median),
        `${kb(m.median)} (${kb(m.min)}–${kb(m.max)})`,
        complete(raw) ? ratio(m.median / rawMemory) : "–"
      ]
    })
    const s = stats.get("Switchboard")
    const ok = complete(s)
    const mine = memory.get("Switchboard")!.median
    const verdicts: Array<Verdict> = [
      {
        target: `Switchboard: memory per open stream ≤ ${memoryTarget} × the raw parser's`,
        measured: ok && complete(raw) ? `${ratio(mine / rawMemory)} (${kb(mine)} vs ${kb(rawMemory)})` : (s?.error ?? "a run failed"),
        pass: ok && complete(raw) && mine <= memoryTarget * rawMemory
      }
    ]
    return {
      id,
      title,
      method,
      tables: [{
        table: {
          header: ["client", "what", "chunks/s (median)", "min–max", "× raw", "× openai", "CPU/chunk", "RSS before", "peak RSS", "per open stream (min–max)", "× raw"],
          numeric: [2, 3, 4, 5, 6, 7, 8, 9, 10],
          rows
        }
      }],
      verdicts,
      notes: [],
      serverCores: maxServerCores(stats.values())
    }
  }
}
