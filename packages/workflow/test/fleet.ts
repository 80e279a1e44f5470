/**
 * What the process tests check in the emulator's requests and the runners' log.
 */
import type { Emulator } from "@switchboard/emulator"
import type * as ManagedRuntime from "effect/ManagedRuntime"
import { expect } from "vitest"
import type { LogEvent } from "./processes.js"

/** Waits, request by request (no clock), until `done(submissions, status calls)` holds. */
export const awaitRequests = async <R>(
  runtime: ManagedRuntime.ManagedRuntime<R, never>,
  emulator: Emulator.Emulator["Type"],
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
 * Checks, task by task, that the runner started after `killed` ran no status
 * activity that `killed` had finished before starting a later one: only the
 * one in flight at the kill may run again. Returns how many ran again.
 */
export const checkNoRerun = (events: ReadonlyArray<LogEvent>, killed: number, survivor: number): number => {
  const polls = events.filter((e) => e.ev === "status")
  for (const event of polls) expect(event.activity).toMatch(/^status-\d+$/)
  let repeated = 0
  for (const taskId of new Set(polls.map((e) => e.taskId))) {
    const before = polls.filter((e) => e.taskId === taskId && e.pid === killed).map(pollIndex)
    const after = polls.filter((e) => e.taskId === taskId && e.pid === survivor).map(pollIndex)
    const last = before.length === 0 ? -1 : Math.max(...before)
    for (const index of after) expect(index).toBeGreaterThanOrEqual(last)
    repeated += after.filter((index) => index === last).length
  }
  return repeated
}
