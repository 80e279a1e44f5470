/**
 * Helpers of the client processes: the timed section and a bounded pool of
 * Promise workers. Nothing here imports Effect, so the raw client's process
 * stays free of it.
 */
import { performance } from "node:perf_hooks"
import type { ClientToParent, Measured } from "../lib/ipc.js"

const phase = (phase: "start" | "end") => {
  const message: ClientToParent = { type: "phase", phase }
  process.send?.(message)
}

/** Runs `body` as the timed section: wall time and this process's CPU time. */
export const measure = async (
  units: number,
  body: () => Promise<Readonly<Record<string, number | string>> | void>
): Promise<Measured> => {
  phase("start")
  const cpu = process.cpuUsage()
  const start = performance.now()
  const extra = await body()
  const elapsedMs = performance.now() - start
  const used = process.cpuUsage(cpu)
  phase("end")
  return {
    elapsedMs,
    units,
    cpuUserMicros: used.user,
    cpuSystemMicros: used.system,
    ...(extra ? { extra } : {})
  }
}

/**
 * The timed section of a concurrent-streams run, with the memory it took:
 * RSS after a full collection just before it (when `--expose-gc` is on), and
 * the peak during it, sampled every 5 ms and checked against `maxRSS`.
 */
export const measureOpenStreams = async (units: number, body: () => Promise<void>): Promise<Measured> => {
  ;(globalThis as { gc?: () => void }).gc?.()
  const rssBefore = process.memoryUsage.rss()
  let rssPeak = rssBefore
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
  }, 5)
  try {
    const measured = await measure(units, body)
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss(), process.resourceUsage().maxRSS * 1024)
    return { ...measured, extra: { ...measured.extra, rssBefore, rssPeak } }
  } finally {
    clearInterval(sampler)
  }
}

/** A point in time past which loops stop with an error. */
export const deadline = (timeLimitMs: number) => performance.now() + timeLimitMs

export const checkDeadline = (until: number, what: string) => {
  if (performance.now() > until) throw new Error(`time limit reached during ${what}`)
}

/** `count` tasks, at most `concurrency` at once, stopping at `until`. */
export const pool = async (
  count: number,
  concurrency: number,
  until: number,
  task: (i: number) => Promise<void>
): Promise<void> => {
  let next = 0
  const worker = async () => {
    while (next < count) {
      checkDeadline(until, `task ${next} of ${count}`)
      await task(next++)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

export const baseUrl = (port: number) => `http://127.0.0.1:${port}`

/** The minimal check every client makes of a completion. */
export const checkCompletion = (completion: { readonly choices: ReadonlyArray<{ readonly message: { readonly content?: string | null | undefined } }> }) => {
  if (typeof completion.choices[0]?.message.content !== "string") throw new Error("completion without content")
}

/** The check every client makes of a whole stream: chunk count and `finish_reason` on the last. */
export const checkStream = (seen: number, expected: number, finished: boolean) => {
  if (seen !== expected || !finished) {
    throw new Error(`stream had ${seen} chunks (expected ${expected}), finish_reason ${finished ? "seen" : "missing"}`)
  }
}
