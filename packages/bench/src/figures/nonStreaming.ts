/**
 * Non-streaming `Chat.create`: requests/s and client CPU per request at
 * concurrency 32, against raw undici and the official client.
 */
import { type ClientStats, complete, type Context, effect3Client, type Figure, interleave, maxServerCores, type Verdict } from "../lib/figure.js"
import type { ChatClient } from "../lib/ipc.js"
import { mb, micros, num, range, ratio } from "../lib/stats.js"

export const id = "non-streaming"

export const clients: ReadonlyArray<{
  readonly label: string
  readonly client: ChatClient
  readonly what: string
  /** Run by the Effect 3 edition's client (`lib/effect3.ts`). */
  readonly effect3?: true
}> = [
  { label: "raw undici", client: "undici", what: "`undici.request` + `JSON.parse` (the floor)" },
  { label: "openai", client: "openai", what: "official client, `maxRetries: 0`" },
  { label: "effect/http (reference)", client: "effect-http", what: "bare `HttpClient` over undici + `response.json`, no schema" },
  {
    label: "Switchboard (runPromise)",
    client: "switchboard",
    what: "`runtime.runPromise(Chat.create(…))` per request, `ManagedRuntime.make(NodeSwitchboard.layer(…))` once"
  },
  {
    label: "Switchboard (Effect.forEach)",
    client: "switchboard-forEach",
    what: "one program: `Effect.forEach(…, () => Chat.create(…), { concurrency: 32 })`"
  },
  {
    label: "HttpClientWire over undici (A/B)",
    client: "switchboard-wire-undici",
    what: "the `runPromise` client over `HttpClientWire` + `NodeHttpClient.layerUndici` instead of `NodeHttpWire`"
  },
  {
    label: "HttpClientWire over fetch (A/B)",
    client: "switchboard-wire-fetch",
    what: "the same over `FetchHttpClient` (Node's fetch)"
  },
  {
    label: "Effect 3 edition (runPromise)",
    client: "switchboard",
    what: "the same `runPromise` client, Switchboard at `2ccd179` on effect 3.22",
    effect3: true
  },
  {
    label: "Effect 3 edition (Effect.forEach)",
    client: "switchboard-forEach",
    what: "the same `Effect.forEach` program at `2ccd179`",
    effect3: true
  }
]

/** The Effect 4 edition's target: requests/s with full validation against the floor. */
const rawRateTarget = 0.6

/** The Effect 4 edition's clients: the targets are theirs. */
export const switchboardLabels = clients
  .filter((c) => (c.client === "switchboard" || c.client === "switchboard-forEach") && !c.effect3)
  .map((c) => c.label)

export const figure: Figure = {
  id,
  title: "Non-streaming Chat.create",
  run: async (context: Context) => {
    const { chat, timeLimitMs } = context.settings
    const method =
      `${num(chat.count)} \`POST /v1/chat/completions\` at concurrency ${chat.concurrency} per run, after ${num(chat.warmup)} ` +
      `warm-up requests, ${chat.rounds} interleaved rounds, each run in a fresh process. Every client checks ` +
      `\`choices[0].message.content\`; Switchboard also validates the whole completion against its schema. ` +
      `CPU is the client process's \`process.cpuUsage()\` over the timed section, divided by the requests.`
    const stats = await interleave(
      context,
      clients.map(({ client, effect3, label }) => {
        const spec = {
          workload: "chat",
          client,
          port: context.server.port,
          count: chat.count,
          concurrency: chat.concurrency,
          warmup: chat.warmup,
          timeLimitMs
        } as const
        return effect3 ? effect3Client(context, label, spec) : { label, spec }
      }),
      chat.rounds
    )
    const raw = stats.get("raw undici")
    const openai = stats.get("openai")
    const rows = clients.map(({ label, what }) => {
      const s = stats.get(label)!
      if (!complete(s)) return [label, what, `failed: ${s.error ?? "no run"}`, "", "", "", "", "", ""]
      return [
        label,
        what,
        num(s.rate.median),
        range(s.rate),
        complete(raw) ? ratio(s.rate.median / raw.rate.median) : "–",
        complete(openai) ? ratio(s.rate.median / openai.rate.median) : "–",
        micros(s.cpuPerUnit.median),
        complete(raw) ? ratio(s.cpuPerUnit.median / raw.cpuPerUnit.median) : "–",
        mb(s.peakRss.median)
      ]
    })
    const verdicts: Array<Verdict> = []
    for (const label of switchboardLabels) {
      const s = stats.get(label)
      const measurable = complete(s)
      verdicts.push(
        measurable && complete(raw)
          ? {
            target: `${label}: requests/s ≥ ${rawRateTarget} × raw undici's, fully validated`,
            measured: `${ratio(s.rate.median / raw.rate.median)} (${num(s.rate.median)} vs ${num(raw.rate.median)}/s)`,
            pass: s.rate.median >= rawRateTarget * raw.rate.median
          }
          : { target: `${label}: requests/s ≥ ${rawRateTarget} × raw undici's, fully validated`, measured: "a run failed", pass: false }
      )
    }
    return {
      id,
      title: "Non-streaming Chat.create",
      method,
      tables: [{
        table: {
          header: ["client", "what", "requests/s (median)", "min–max", "× raw", "× openai", "CPU/request", "CPU × raw", "peak RSS"],
          numeric: [2, 3, 4, 5, 6, 7, 8],
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
