/**
 * Whole-process runs: a script started fresh each time, timed from spawn to
 * exit, its peak RSS reported by the script itself as it exits
 * (`cold/report.ts`). Rounds interleave the scripts (A B C A B C …).
 */
import type { ColdReport } from "../cold/report.js"
import { runScript } from "./processes.js"
import { type Summary, summarize } from "./stats.js"

export interface ScriptSpec {
  readonly label: string
  /** `node` arguments: flags, the script, its arguments. */
  readonly args: ReadonlyArray<string>
  readonly env?: NodeJS.ProcessEnv
}

export interface WholeRun {
  readonly wallMs: number
  readonly maxRss: number
  readonly cpuMs: number
  readonly importedMs: number | undefined
}

export interface WholeStats {
  readonly label: string
  readonly runs: ReadonlyArray<WholeRun>
  readonly error?: string
  readonly wallMs: Summary
  readonly maxRss: Summary
  readonly cpuMs: Summary
  readonly importedMs: Summary | undefined
}

/** The script's report: the last line of its stdout that is one. */
const reportOf = (stdout: string): ColdReport | undefined => {
  const lines = stdout.trim().split("\n").reverse()
  for (const line of lines) {
    if (!line.startsWith("{\"ok\"")) continue
    try {
      return JSON.parse(line) as ColdReport
    } catch {
      return undefined
    }
  }
  return undefined
}

export const interleaveScripts = async (
  scripts: ReadonlyArray<ScriptSpec>,
  rounds: number,
  options: { readonly timeLimitMs: number; readonly log: (line: string) => void }
): Promise<Map<string, WholeStats>> => {
  const runs = new Map<string, Array<WholeRun>>(scripts.map((s) => [s.label, []]))
  const errors = new Map<string, string>()
  for (let round = 1; round <= rounds; round++) {
    for (const script of scripts) {
      if (errors.has(script.label)) continue
      const run = await runScript(script.args, { timeLimitMs: options.timeLimitMs, ...(script.env ? { env: script.env } : {}) })
      const report = reportOf(run.stdout)
      if (run.exitCode !== 0 || report === undefined || !report.ok) {
        const why = report?.error ?? (run.stderr.trim().split("\n").slice(-3).join(" ") || `exit code ${run.exitCode}`)
        errors.set(script.label, why)
        options.log(`  round ${round} ${script.label}: FAILED: ${why}`)
        continue
      }
      runs.get(script.label)!.push({ wallMs: run.wallMs, maxRss: report.maxRss, cpuMs: report.cpuMs, importedMs: report.importedMs })
      options.log(
        `  round ${round} ${script.label}: ${run.wallMs.toFixed(0)} ms, CPU ${report.cpuMs.toFixed(0)} ms, peak RSS ${(report.maxRss / 1048576).toFixed(1)} MB` +
          (report.importedMs === undefined ? "" : `, imports done at ${report.importedMs.toFixed(0)} ms`)
      )
    }
  }
  return new Map(scripts.map(({ label }) => {
    const list = runs.get(label)!
    const error = errors.get(label)
    const imports = list.flatMap((r) => (r.importedMs === undefined ? [] : [r.importedMs]))
    return [label, {
      label,
      runs: list,
      ...(error === undefined ? {} : { error }),
      wallMs: summarize(list.map((r) => r.wallMs)),
      maxRss: summarize(list.map((r) => r.maxRss)),
      cpuMs: summarize(list.map((r) => r.cpuMs)),
      importedMs: imports.length === 0 ? undefined : summarize(imports)
    }]
  }))
}

export const completeRuns = (stats: WholeStats | undefined): stats is WholeStats & { readonly complete: true } =>
  stats !== undefined && stats.error === undefined && stats.runs.length > 0
