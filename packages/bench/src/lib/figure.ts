/**
 * What a figure is, and the interleaved rounds every figure runs its clients in.
 */
import { effect3, isBuilt } from "./effect3.js"
import type { ClientSpec } from "./ipc.js"
import type { Server } from "./processes.js"
import { runClient } from "./processes.js"
import { type Summary, summarize, type Table } from "./stats.js"

export interface Settings {
  readonly quick: boolean
  readonly chat: { readonly count: number; readonly concurrency: number; readonly warmup: number; readonly rounds: number }
  readonly stream: { readonly streams: number; readonly chunks: number; readonly warmupStreams: number; readonly rounds: number }
  readonly memory: { readonly small: number; readonly large: number; readonly rounds: number }
  readonly openStreams: { readonly streams: number; readonly chunks: number; readonly warmupStreams: number; readonly rounds: number }
  readonly embed: { readonly inputs: number; readonly rounds: number }
  readonly agent: { readonly count: number; readonly concurrency: number; readonly warmup: number; readonly rounds: number }
  /** The agent-load figure: `runs` agent runs at once, after `warmupRuns`. */
  readonly load: { readonly runs: number; readonly warmupRuns: number; readonly rounds: number }
  readonly profile: { readonly count: number }
  /** Rounds of the whole-process figures (cold start, the CLI's start). */
  readonly cold: { readonly rounds: number }
  /** Per client run; a run past it fails rather than loops on. */
  readonly timeLimitMs: number
}

export interface Context {
  readonly server: Server
  readonly settings: Settings
  /** Results of the figures run so far, by id. */
  readonly results: ReadonlyMap<string, FigureResult>
  readonly log: (line: string) => void
}

export interface Verdict {
  readonly target: string
  readonly measured: string
  readonly pass: boolean
}

export interface FigureResult {
  readonly id: string
  readonly title: string
  /** Set when a dependency is missing: the figure was not measured, and why. */
  readonly notMeasured?: string
  /** How the figure is measured, one paragraph. */
  readonly method: string
  readonly tables: ReadonlyArray<{ readonly caption?: string; readonly table: Table }>
  readonly verdicts: ReadonlyArray<Verdict>
  readonly notes: ReadonlyArray<string>
  /** Highest server CPU over any timed section of the figure, in cores. */
  readonly serverCores: number | undefined
  /** The 1-minute load average before and after the figure ran (set by `main.ts`). */
  readonly load?: readonly [number, number]
  /** Raw per-client statistics, for figures that build on this one. */
  readonly stats?: ReadonlyMap<string, ClientStats>
}

export interface Figure {
  readonly id: string
  readonly title: string
  readonly run: (context: Context) => Promise<FigureResult>
}

export interface RunSample {
  /** Units per second over the timed section. */
  readonly rate: number
  readonly elapsedMs: number
  /** Client CPU (user + system) per unit, in microseconds. */
  readonly cpuPerUnit: number
  /** Client CPU over the timed section, in cores. */
  readonly clientCores: number
  /** The higher of the sampled RSS peak and `maxRSS`, in bytes. */
  readonly peakRss: number
  readonly serverCores: number | undefined
  readonly extra: Readonly<Record<string, number | string>>
}

export interface ClientStats {
  readonly label: string
  readonly samples: ReadonlyArray<RunSample>
  /** Set when the client failed. */
  readonly error?: string
  readonly rate: Summary
  readonly cpuPerUnit: Summary
  readonly clientCores: Summary
  readonly peakRss: Summary
}

/** One client of a figure; `clientPath` runs the Effect 3 edition's client, `unavailable` says why it cannot run. */
export interface ClientRun {
  readonly label: string
  readonly spec: ClientSpec
  readonly clientPath?: string
  readonly unavailable?: string
}

/**
 * The Effect 3 edition's client of the same spec (its `client.js` takes our
 * specs as they are), or a row that says why it cannot run.
 */
export const effect3Client = (context: Context, label: string, spec: ClientSpec): ClientRun => {
  const edition = effect3(context.log)
  return isBuilt(edition) ? { label, spec, clientPath: edition.bench("client.js") } : { label, spec, unavailable: edition.error }
}

/**
 * Runs `rounds` rounds, each running every client once in order (A B C A B C …),
 * each run in a fresh process. A client that fails is not run again.
 */
export const interleave = async (
  context: Context,
  clients: ReadonlyArray<ClientRun>,
  rounds: number,
  options: { readonly execArgv?: ReadonlyArray<string> } = {}
): Promise<Map<string, ClientStats>> => {
  const samples = new Map<string, Array<RunSample>>(clients.map((c) => [c.label, []]))
  const errors = new Map<string, string>(
    clients.flatMap((c) => (c.unavailable === undefined ? [] : [[c.label, c.unavailable] as const]))
  )
  for (let round = 1; round <= rounds; round++) {
    for (const { clientPath, label, spec } of clients) {
      if (errors.has(label)) continue
      const { result, serverCores } = await runClient(spec, context.server, {
        ...options,
        ...(clientPath === undefined ? {} : { clientPath })
      })
      if (!result.ok) {
        errors.set(label, result.error)
        context.log(`  round ${round} ${label}: FAILED: ${result.error}`)
        continue
      }
      const seconds = result.elapsedMs / 1000
      const cpu = result.cpuUserMicros + result.cpuSystemMicros
      const sample: RunSample = {
        rate: result.units / seconds,
        elapsedMs: result.elapsedMs,
        cpuPerUnit: cpu / result.units,
        clientCores: cpu / 1e6 / seconds,
        peakRss: Math.max(result.sampledPeakRss, result.maxRss),
        serverCores,
        extra: result.extra ?? {}
      }
      samples.get(label)!.push(sample)
      context.log(
        `  round ${round} ${label}: ${Math.round(sample.rate).toLocaleString("en-US")}/s, ` +
          `${sample.cpuPerUnit.toFixed(1)} µs CPU/unit, client ${sample.clientCores.toFixed(2)} cores, ` +
          `server ${serverCores === undefined ? "?" : serverCores.toFixed(2)} cores, ` +
          `peak RSS ${(sample.peakRss / 1048576).toFixed(1)} MB`
      )
    }
  }
  return new Map(
    clients.map(({ label }) => {
      const list = samples.get(label)!
      const error = errors.get(label)
      return [label, {
        label,
        samples: list,
        ...(error === undefined ? {} : { error }),
        rate: summarize(list.map((s) => s.rate)),
        cpuPerUnit: summarize(list.map((s) => s.cpuPerUnit)),
        clientCores: summarize(list.map((s) => s.clientCores)),
        peakRss: summarize(list.map((s) => s.peakRss))
      }]
    })
  )
}

/** The highest server load over every run of the given clients. */
export const maxServerCores = (stats: Iterable<ClientStats>): number | undefined => {
  let max: number | undefined
  for (const s of stats) {
    for (const sample of s.samples) {
      if (sample.serverCores !== undefined) max = Math.max(max ?? 0, sample.serverCores)
    }
  }
  return max
}

/** A client's results are usable when every round ran. */
export const complete = (stats: ClientStats | undefined): stats is ClientStats & { readonly complete: true } =>
  stats !== undefined && stats.error === undefined && stats.samples.length > 0

export const notMeasured = (id: string, title: string, method: string, why: string): FigureResult => ({
  id,
  title,
  notMeasured: why,
  method,
  tables: [],
  verdicts: [],
  notes: [],
  serverCores: undefined
})
