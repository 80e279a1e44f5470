/**
 * What every client of the agent-load figure shares: the prompt, the tools'
 * names, the step timeline and the timed section. Nothing here imports
 * Effect, so a client that does not use it never loads it.
 *
 * The emulator calls the tools a message names, one step per segment split
 * on "then" (`docs/emulator.md`, Tools), with the arguments written in it:
 * every run is the same three steps, a call of `lookup_order`, a call of
 * `lookup_invoice`, and the answer in text. The run's number in the arguments
 * tells a tool whose step it ends.
 */
import { performance } from "node:perf_hooks"
import type { ClientSpec, Measured } from "../lib/ipc.js"
import { deadline, measureOpenStreams, pool } from "./common.js"

export type LoadSpec = Extract<ClientSpec, { workload: "agent-load" }>

export const steps = 3
export const toolNames = ["lookup_order", "lookup_invoice"] as const
export const toolDescription = "Looks the record up, at once."

export const prompt = (run: number) =>
  `Call lookup_order({"run":${run}}) then call lookup_invoice({"run":${run}}) then answer in one sentence.`

/**
 * When each run started, when each tool was called and when the run ended:
 * the step boundaries. Step 1 is the start to the first tool's call (the
 * model call and its decoding), step 2 the first tool's call to the second's
 * (the tool, the next request, its model call), step 3 the second tool's
 * call to the end (the tool, the last model call, the answer).
 */
export interface Timeline {
  readonly start: (run: number) => void
  /** Called by tool `index` (0 or 1) with the `run` argument the model gave it. */
  readonly tool: (index: 0 | 1, run: unknown) => void
  readonly end: (run: number) => void
  /** Every step's duration in milliseconds, runs in order; throws if a tool failed or a step was never reached. */
  readonly durations: () => Float64Array
}

export const timeline = (runs: number): Timeline => {
  const marks = new Float64Array(runs * (steps + 1))
  let failure: string | undefined
  return {
    start: (run) => void (marks[run * (steps + 1)] = performance.now()),
    tool: (index, run) => {
      // The argument comes from the service: an index only once checked. A
      // client may turn the throw into a message for the model, so the
      // timeline keeps the failure too.
      if (typeof run !== "number" || !Number.isInteger(run) || run < 0 || run >= runs) {
        failure ??= `tool ${toolNames[index]} called with run ${JSON.stringify(run)}`
        throw new Error(failure)
      }
      marks[run * (steps + 1) + index + 1] = performance.now()
    },
    end: (run) => void (marks[run * (steps + 1) + steps] = performance.now()),
    durations: () => {
      if (failure !== undefined) throw new Error(failure)
      const missing = marks.indexOf(0)
      if (missing !== -1) throw new Error(`run ${Math.floor(missing / (steps + 1))} never reached mark ${missing % (steps + 1)}`)
      const out = new Float64Array(runs * steps)
      for (let run = 0; run < runs; run++) {
        for (let step = 0; step < steps; step++) {
          const base = run * (steps + 1) + step
          out[run * steps + step] = marks[base + 1]! - marks[base]!
        }
      }
      return out
    }
  }
}

/** The value below which `share` of the sorted values lie (nearest rank). */
const percentile = (sorted: Float64Array, share: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))]!

/** Rejects once `until` passes, so that a run that never ends fails the client instead of hanging it. */
const bounded = <A>(promise: Promise<A>, until: number): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("time limit reached with agent runs still open")), Math.max(0, until - performance.now()))
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

/**
 * The client's side of the figure: `warmupRuns` runs (at most 100 at once),
 * then `runs` runs started at once as the timed section. `once(run, line)`
 * does one whole run, calling the tools that mark `line`, and checks its
 * result. Units are steps; `extra` has the step latencies and the memory.
 */
export const loadRuns = async (
  spec: LoadSpec,
  once: (run: number, line: Timeline) => Promise<void>
): Promise<Measured> => {
  const until = deadline(spec.timeLimitMs)
  const marked = (line: Timeline) => async (run: number) => {
    line.start(run)
    await once(run, line)
    line.end(run)
  }
  const warm = timeline(spec.warmupRuns)
  await bounded(pool(spec.warmupRuns, 100, until, marked(warm)), until)
  warm.durations()
  const line = timeline(spec.runs)
  const measured = await measureOpenStreams(spec.runs * steps, () => bounded(pool(spec.runs, spec.runs, until, marked(line)), until))
  const sorted = line.durations().sort()
  return {
    ...measured,
    extra: { ...measured.extra, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted[sorted.length - 1]! }
  }
}
