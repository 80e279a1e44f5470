/**
 * What every cold-start script reports as its process exits: its peak RSS
 * (`maxRSS`, the whole life) and how long it lived by its own clock, as one
 * JSON line on stdout. Registered first, so the script's own imports are
 * measured; nothing here imports a client.
 */
import * as fs from "node:fs"
import { performance } from "node:perf_hooks"

export interface ColdReport {
  readonly ok: boolean
  readonly error?: string
  /** `process.resourceUsage().maxRSS`, in bytes. */
  readonly maxRss: number
  /** Milliseconds from the process's start (`performance.timeOrigin`) to its exit. */
  readonly uptimeMs: number
  /** The process's CPU time (user + system) over its life, in milliseconds: steadier than wall time on a busy machine. */
  readonly cpuMs: number
  /** Milliseconds from the start to the end of the script's imports. */
  readonly importedMs?: number
}

let error: string | undefined
let importedMs: number | undefined

/** Marks the end of the imports (the first line of a script's body). */
export const imported = () => {
  importedMs = performance.now()
}

/** Records a failure; the process then exits 1. */
export const fail = (cause: unknown) => {
  error = cause instanceof Error ? cause.message : String(cause)
  process.exitCode = 1
}

process.on("exit", () => {
  const cpu = process.cpuUsage()
  const report: ColdReport = {
    ok: error === undefined,
    ...(error === undefined ? {} : { error }),
    maxRss: process.resourceUsage().maxRSS * 1024,
    uptimeMs: performance.now(),
    cpuMs: (cpu.user + cpu.system) / 1000,
    ...(importedMs === undefined ? {} : { importedMs })
  }
  fs.writeSync(1, `${JSON.stringify(report)}\n`)
})
