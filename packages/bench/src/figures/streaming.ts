/**
 * Streaming decode: chunks/s of `Chat.stream` (with chunk validation) against
 * the official client's stream and a hand-written SSE parser over undici.
 */
import { type ClientStats, complete, type Context, effect3Client, type Figure, interleave, maxServerCores, type Verdict } from "../lib/figure.js"
import type { StreamClient } from "../lib/ipc.js"
import { mb, micros, num, range, ratio } from "../lib/stats.js"

const id = "streaming"
const title = "Streaming Chat.stream"

const clients: ReadonlyArray<{
  readonly label: string
  readonly client: StreamClient
  readonly what: string
  readonly effect3?: true
}> = [
  { label: "raw SSE parser", client: "undici-sse", what: "`undici.request`, hand-written `data:` line parser, `JSON.parse`" },
  { label: "openai", client: "openai", what: "official client, `for await (const chunk of stream)`" },
  {
    label: "raw parser in a Stream (runForEach)",
    client: "raw-stream",
    what: "the raw parser's work, each read's chunks one batch of `Stream.fromPull`, `Stream.runForEach`: the floor of a client on `Stream`"
  },
  {
    label: "raw parser in a Stream (runFold)",
    client: "raw-stream-fold",
    what: "the same with `Stream.runFold`"
  },
  {
    label: "Switchboard (runForEach)",
    client: "switchboard",
    what: "`Chat.stream(…)` + `Stream.runForEach`, every chunk schema-validated"
  },
  {
    label: "Switchboard (runFold)",
    client: "switchboard-fold",
    what: "`Chat.stream(…)` + `Stream.runFold`, every chunk schema-validated"
  },
  {
    label: "HttpClientWire over undici (A/B)",
    client: "switchboard-wire-undici",
    what: "the `runForEach` client over `HttpClientWire` + `NodeHttpClient.layerUndici` instead of `NodeHttpWire`"
  },
  { label: "HttpClientWire over fetch (A/B)", client: "switchboard-wire-fetch", what: "the same over `FetchHttpClient`" },
  { label: "Effect 3 edition (runForEach)", client: "switchboard", what: "the same `runForEach` client at `2ccd179`", effect3: true },
  { label: "Effect 3 edition (runFold)", client: "switchboard-fold", what: "the same `runFold` client at `2ccd179`", effect3: true }
]

/** Issue 38's targets: every chunk schema-checked, against a parser that checks nothing. */
const rawTarget = 0.9
const cpuTarget = 1.15

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const { stream, timeLimitMs } = context.settings
    const method =
      `${stream.streams} streams × ${num(stream.chunks)} chunks per run, read one after another, after ` +
      `${stream.warmupStreams} warm-up streams of up to 2,000 chunks (so that what is measured is past V8's ` +
      `compiling of the client's code), ${stream.rounds} interleaved rounds. The server writes ` +
      "`chat.completion.chunk` events 256 per write, `finish_reason` on the last, then `data: [DONE]`. Every client " +
      "counts the chunks and checks `finish_reason` on the last; Switchboard decodes each chunk with its schema."
    const stats = await interleave(
      context,
      clients.map(({ client, effect3, label }) => {
        const spec = {
          workload: "stream",
          client,
          port: context.server.port,
          streams: stream.streams,
          chunks: stream.chunks,
          warmupStreams: stream.warmupStreams,
          timeLimitMs
        } as const
        return effect3 ? effect3Client(context, label, spec) : { label, spec }
      }),
      stream.rounds
    )
    const raw = stats.get("raw SSE parser")
    const openai = stats.get("openai")
    const rows = clients.map(({ label, what }) => {
      const s = stats.get(label)!
      if (!complete(s)) return [label, what, `failed: ${s.error ?? "no run"}`, "", "", "", "", ""]
      return [
        label,
        what,
        num(s.rate.median),
        range(s.rate),
        complete(raw) ? ratio(s.rate.median / raw.rate.median) : "–",
        complete(openai) ? ratio(s.rate.median / openai.rate.median) : "–",
        micros(s.cpuPerUnit.median),
        mb(s.peakRss.median)
      ]
    })
    const verdicts: Array<Verdict> = []
    for (const label of ["Switchboard (runForEach)", "Switchboard (runFold)"]) {
      const s = stats.get(label)
      const ok = complete(s)
      verdicts.push(
        ok && complete(raw)
          ? {
            target: `${label}: chunks/s ≥ ${rawTarget} × the raw SSE parser's`,
            measured: `${ratio(s.rate.median / raw.rate.median)} (${num(s.rate.median)} vs ${num(raw.rate.median)}/s)`,
            pass: s.rate.median >= rawTarget * raw.rate.median
          }
          : { target: `${label}: chunks/s ≥ ${rawTarget} × the raw SSE parser's`, measured: s?.error ?? "a run failed", pass: false }
      )
      verdicts.push(
        ok && complete(raw)
          ? {
            target: `${label}: client CPU per chunk ≤ ${cpuTarget} × the raw SSE parser's`,
            measured: `${ratio(s.cpuPerUnit.median / raw.cpuPerUnit.median)} (${micros(s.cpuPerUnit.median)} vs ${
              micros(raw.cpuPerUnit.median)
            })`,
            pass: s.cpuPerUnit.median <= cpuTarget * raw.cpuPerUnit.median
          }
          : { target: `${label}: client CPU per chunk ≤ ${cpuTarget} × the raw SSE parser's`, measured: s?.error ?? "a run failed", pass: false }
      )
    }
    return {
      id,
      title,
      method,
      tables: [{
        table: {
          header: ["client", "what", "chunks/s (median)", "min–max", "× raw", "× openai", "CPU/chunk", "peak RSS"],
          numeric: [2, 3, 4, 5, 6, 7],
          rows
        }
      }],
      verdicts,
      notes: [],
      serverCores: maxServerCores(stats.values()),
      stats: stats as ReadonlyMap<string, ClientStats>
    }
  }
}
