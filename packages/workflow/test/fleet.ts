/**
 * What the process tests check in the emulator's requests and the runners' log.
 */
import type { Emulator } from "@switchboard/emulator"
import type * as ManagedRuntime from "effect/ManagedRuntime"
import { expect } from "vitest"
import type { LogEvent } from "./processes.js"

/** Waits, request by request (no clock), until `done(submissions, status calls)` holds. */
export const awaitRequests = async <R, ER>(
  runtime: ManagedRuntime.ManagedRuntime<R, ER>,
  emulator: Emulator.Emulator["Service"],
  done: (submissions: number, polls: number) => boolean
): Promise<void> => {
  for (let n = 1;; n++) {
    await runtime.runPromise(emulator.awaitRequests(n))
    const requests = await runtime.runPromise(emulator.requests)
    const submissions = requests.filter((r) => r.path.endsWith("/chat/completions")).length
    const polls = requests.filter((r) => r.path.endsWith("/chat/task/status")).length
    if (done(submissions, polls)) return
    n = Math.max(n, requests.length)
  }
}

const pollIndex = (event: LogEvent): number => Number(event.activity?.replace(/^status-/, ""))

/**
 * Checks, task by task, the status calls in time order: they come from one
 * runner at a time (no A, B, A), and the workflow's poll index never goes
 * back, so no poll runs again once a later one started; only the poll in
 * flight when its runner died may run again on the next. Returns how many did.
 */
export const checkPolls = (events: ReadonlyArray<LogEvent>): { readonly repeated: number; readonly handovers: number } => {
  const polls = events.filter((e) => e.ev === "status")
  for (const event of polls) expect(event.activity).toMatch(/^status-\d+$/)
  let repeated = 0
  let handovers = 0
  for (const taskId of new Set(polls.map((e) => e.taskId))) {
    const sequence = polls.filter((e) => e.taskId === taskId).sort((a, b) => a.at - b.at)
    const runners: Array<number> = []
    const ranBy = new Map<number, Set<number>>()
    sequence.forEach((event, i) => {
      if (i > 0) expect(pollIndex(event)).toBeGreaterThanOrEqual(pollIndex(sequence[i - 1]!))
      if (runners.at(-1) !== event.pid) {
        expect(runners).not.toContain(event.pid)
        runners.push(event.pid)
      }
      ranBy.set(pollIndex(event), (ranBy.get(pollIndex(event)) ?? new Set()).add(event.pid))
    })
    handovers += runners.length - 1
    repeated += [...ranBy.values()].filter((pids) => pids.size > 1).length
  }
  return { repeated, handovers }
}
