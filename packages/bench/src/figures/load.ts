/**
 * The largest realistic load on this machine: many agent runs of three steps
 * at once against the emulator, Switchboard's `Agent.run` beside Vercel
 * `ai`'s `generateText` with tools and OpenAI's Agents SDK. No target: the
 * issue asks for the figure.
 */
import { complete, type Context, type Figure, interleave, notMeasured, type RunSample } from "../lib/figure.js"
import { emulatorPath, startServer } from "../lib/processes.js"
import { cores, kb, mb, median, micros, num, range, ratio, summarize } from "../lib/stats.js"

const id = "agent-load"
const title = "Concurrent agent runs"

const clients = [
  {
    label: "Switchboard",
    client: "switchboard",
    what: "`Agent.run` with an `effect/ai` toolkit (`Schema` parameters) and `maxSteps: 3`, one `runtime.runPromise` per run"
  },
  {
    label: "Vercel ai",
    client: "ai",
    what: "`generateText` with two `tool`s (zod parameters) and `stopWhen: stepCountIs(3)`, through " +
      "`@ai-sdk/openai-compatible`"
  },
  {
    label: "OpenAI Agents SDK",
    client: "openai-agents",
    what: "`@openai/agents-core`'s `Runner.run` of an `Agent` with two `tool`s (zod parameters) and `maxTurns: 3`, on " +
      "`@openai/agents-openai`'s Chat Completions model (`OpenAIProvider` with `useResponses: false`), tracing off"
  }
] as const

const extra = (sample: RunSample, key: string) => Number(sample.extra[key])
/** Memory the timed section took per run: peak RSS during it less RSS before it. */
const perRun = (sample: RunSample, runs: number) => (extra(sample, "rssPeak") - extra(sample, "rssBefore")) / runs
const ms = (value: number) => `${num(value)} ms`

interface Columns {
  readonly s: { readonly cpuPerUnit: { readonly median: number } }
  readonly memory: { readonly median: number }
  readonly p99: { readonly median: number }
  readonly clientCores: number
  readonly emulator: number
}

/** Switchboard against each other client in this run, column by column, and where it is behind. */
const comparison = (ours: Columns, others: ReadonlyArray<readonly [string, Columns]>) => {
  const behind: Array<string> = []
  const parts = others.map(([label, theirs]) => {
    const columns = [
      ["client CPU per step", ours.s.cpuPerUnit.median / theirs.s.cpuPerUnit.median],
      ["memory per run", ours.memory.median / theirs.memory.median],
      ["p99 step latency", ours.p99.median / theirs.p99.median]
    ] as const
    behind.push(...columns.filter(([, r]) => r > 1).map(([name]) => `${name} against ${label}`))
    return `against ${label}, ${columns.map(([name, r]) => `${name} ${ratio(r)}`).join(", ")}`
  })
  return `Switchboard in this run: ${parts.join("; ")}: ` +
    (behind.length === 0 ? "ahead on each." : `behind on ${behind.join(", ")}.`) +
    ` Over the timed section the client used ${cores(ours.clientCores)} (${
      others.map(([label, c]) => `${label} ${cores(c.clientCores)}`).join(", ")
    }) and the emulator at most ${cores(Math.max(ours.emulator, ...others.map(([, c]) => c.emulator)))}.`
}

const meaning = "What the numbers mean: every run starts at once, so a step's latency is mostly waiting, for the " +
  "emulator's reply and for a core (two, shared with the emulator and whatever else runs); the latencies compare " +
  "the clients within this run, not against a service. CPU per step and memory per run are the client's own and " +
  "hold best from run to run. The emulator listens with a backlog of 4,096: with Node's default 511, a round of " +
  "2,000 runs had 1,347 SYNs dropped and retried a second later, which was most of its p99."

/** What CPU profiles of the clients showed: the lead if Switchboard falls behind. */
const profile = "Where a step goes (a `--cpu-prof` of one 2,000-run client of each, 2026-11-28, load 15–42, whole " +
  "process): Switchboard, opening and running 2,000 connections at once (Node's `net` and undici) 37 % of the busy " +
  "time, Effect's runtime 21 %, the garbage collector 13 %, core (the request, its decoding) 10 %, the agent's loop " +
  "and tool calls 8 %; `ai`, Node's own fetch and streams 39 %, the garbage collector 19 %, `ai` 13 %, zod 8 % (its " +
  "JSON Schema conversion of the tools, run for each request, among it); the Agents SDK, Node's fetch 39 %, " +
  "`@openai/agents-core` 22 % (the run loop, its item bookkeeping), the garbage collector 19 %, `openai` 7 %. The " +
  "connections are a fixed cost every client pays at this load; what Switchboard could still cut is Effect's work " +
  "per call (fibers, exits) with the garbage it leaves, and the agent loop's share, the same leads as the agent-step " +
  "figure's. The profile is from before issue 38's second agent-step change (fewer effects, and fewer services in " +
  "the context, a step), which took this client's CPU per step from 440 to 402 µs and its memory per run from " +
  "74.8 to 63.9 KB (medians of 4 alternated rounds of the Switchboard client alone, load 7–11)."

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const { load, timeLimitMs } = context.settings
    const method =
      `${num(load.runs)} agent runs started at once, each three steps: the prompt names two tools, so the emulator ` +
      "(`@switchboard/emulator`, in its own process, `Emulator.layer` with no recorded requests) calls " +
      "`lookup_order` in the first step and `lookup_invoice` in the second, and answers in text in the third (its " +
      "documented tool rule: one step per segment split on \"then\"). The tools return at once. Clients: " +
      clients.map((c) => `${c.label}, ${c.what}`).join("; ") + ". " +
      `After ${num(load.warmupRuns)} warm-up runs (100 at a time), ${load.rounds} alternated rounds, a fresh ` +
      "process per run (with `--expose-gc`). A step's latency runs from the run's start, or the previous step's " +
      "tool call, to this step's tool call, or the run's end (so a step holds its model call, its tool and the " +
      "client's work between); p50 and p99 are over every step of the round, the table gives their median over " +
      "rounds. CPU per step is the client's CPU over the timed section over 3 × runs; memory per run is the peak " +
      "RSS during it less the RSS before it (after a full collection), over the runs."
    const emulator = await startServer(emulatorPath).catch((error: unknown) => String(error))
    // The rest of a full run goes on without this figure.
    if (typeof emulator === "string") return notMeasured(id, title, method, `the emulator did not start: ${emulator}`)
    try {
      const stats = await interleave(
        { ...context, server: emulator },
        clients.map(({ client, label }) => ({
          label,
          spec: { workload: "agent-load", client, port: emulator.port, runs: load.runs, warmupRuns: load.warmupRuns, timeLimitMs }
        })),
        load.rounds,
        { execArgv: ["--expose-gc"] }
      )
      const of = (sample: RunSample) => ({
        p50: extra(sample, "p50Ms"),
        p99: extra(sample, "p99Ms"),
        memory: perRun(sample, load.runs),
        seconds: sample.elapsedMs / 1000,
        emulator: sample.serverCores ?? Number.NaN
      })
      const summaries = new Map(clients.map(({ label }) => {
        const s = stats.get(label)!
        const list = s.samples.map(of)
        const pick = (f: (x: ReturnType<typeof of>) => number) => summarize(list.map(f))
        return [label, {
          s,
          p50: pick((x) => x.p50),
          p99: pick((x) => x.p99),
          memory: pick((x) => x.memory),
          seconds: pick((x) => x.seconds),
          emulator: median(list.map((x) => x.emulator)),
          clientCores: s.clientCores.median
        }]
      }))
      const ours = summaries.get(clients[0].label)!
      const others = clients.slice(1).flatMap(({ label }) => {
        const c = summaries.get(label)!
        return complete(c.s) ? [[label, c] as const] : []
      })
      const oursComplete = complete(ours.s)
      const rows = clients.map(({ label }) => {
        const { emulator, memory, p50, p99, s, seconds } = summaries.get(label)!
        if (!complete(s)) return [label, `failed: ${s.error ?? "no run"}`, "", "", "", "", "", "", "", ""]
        return [
          label,
          micros(s.cpuPerUnit.median),
          range(s.cpuPerUnit),
          oursComplete ? ratio(s.cpuPerUnit.median / ours.s.cpuPerUnit.median) : "–",
          kb(memory.median),
          mb(s.peakRss.median),
          ms(p50.median),
          `${ms(p99.median)} (${range(p99)})`,
          `${num(seconds.median)} s`,
          cores(emulator)
        ]
      })
      const notes = oursComplete && others.length > 0 ? [comparison(ours, others), meaning, profile] : [meaning]
      return {
        id,
        title,
        method,
        tables: [{
          table: {
            header: [
              "client",
              "CPU/step",
              "min–max",
              "CPU × Switchboard's",
              "memory/run",
              "peak RSS",
              "p50 step",
              "p99 step (min–max)",
              "timed section",
              "emulator CPU"
            ],
            numeric: [1, 2, 3, 4, 5, 6, 7, 8, 9],
            rows
          }
        }],
        verdicts: [],
        notes,
        // The emulator is the limit by design here (see the notes): its load is a column, not a bottleneck warning.
        serverCores: undefined,
        stats
      }
    } finally {
      await emulator.stop()
    }
  }
}
