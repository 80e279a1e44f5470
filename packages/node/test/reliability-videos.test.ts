/**
 * Video tasks under faults: 200 submissions and their polls with connection
 * drops, cut bodies and failing status calls. No task the service accepted
 * and the SDK learned of is lost (each ends, or stays in the journal and a
 * restarted program finishes it), and no submission is sent twice.
 *
 * Live clock, zero waits: the poll schedule, the status retries and the
 * transport's backoff are all instant, so nothing sleeps.
 */
import { describe, expect, it } from "@effect/vitest"
import { type SwitchboardError, TaskJournal, Videos } from "@switchboard/core"
import { isSwitchboardError } from "@switchboard/core/SwitchboardError"
import { Emulator } from "@switchboard/emulator"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeSwitchboard, NodeTaskJournal } from "../src/index.js"

const TASKS = 200
const CONCURRENCY = 16
const SEED = 9
const submitPath = "/v1/chat/completions"
const statusPath = "/v1/chat/task/status"

const faults: Emulator.FaultOptions = {
  paths: [submitPath, statusPath],
  rate: 0.3,
  seed: SEED,
  random: [
    { _tag: "Reset" },
    { _tag: "ResetAfterHeaders" },
    { _tag: "TruncateBody", closeConnection: true },
    { _tag: "TruncateBody" },
    { _tag: "Status", status: 429, retryAfter: 0 },
    { _tag: "Status", status: 500 },
    { _tag: "Status", status: 503 }
  ]
}

const instantPolls = {
  schedule: Schedule.spaced("0 millis"),
  statusRetry: Schedule.recurs(4),
  // A guard only: with instant polls a task ends after a few status calls.
  deadline: "30 seconds"
} as const

const promptOf = (i: number) => `video task ${i}`

/** Whether the emulator ran the handler, i.e. created the task, for a submission that met `fault`. */
const reachedService = (fault: Emulator.Fault | undefined) => fault?._tag !== "Status" && fault?._tag !== "Reset"

type Outcome =
  | { readonly _tag: "SubmitFailed"; readonly error: SwitchboardError.SwitchboardError }
  | { readonly _tag: "Succeeded"; readonly taskId: string }
  | { readonly _tag: "PollFailed"; readonly taskId: string; readonly error: SwitchboardError.SwitchboardError }

const typed = (cause: Cause.Cause<unknown>): SwitchboardError.SwitchboardError => {
  const error = Option.getOrUndefined(Cause.findErrorOption(cause))
  if (Cause.hasDies(cause) || !isSwitchboardError(error)) throw new Error(`not a typed failure: ${Cause.pretty(cause)}`)
  return error
}

/** Submit, then poll to the end: which of the three ways it ended. */
const submitAndPoll = (i: number) =>
  Effect.gen(function*() {
    const submitted = yield* Effect.exit(Videos.submit({ model: Emulator.videoModel, prompt: promptOf(i) }))
    if (Exit.isFailure(submitted)) return { _tag: "SubmitFailed", error: typed(submitted.cause) } satisfies Outcome
    const taskId: string = submitted.value
    const polled = yield* Effect.exit(Stream.runLast(Videos.poll(taskId, instantPolls)))
    if (Exit.isFailure(polled)) return { _tag: "PollFailed", taskId, error: typed(polled.cause) } satisfies Outcome
    expect(Option.getOrUndefined(polled.value)?._tag).toBe("Succeeded")
    yield* Videos.complete(taskId)
    return { _tag: "Succeeded", taskId } satisfies Outcome
  })

const journalAt = (directory: string) =>
  Effect.flatMap(TaskJournal.TaskJournal, (journal) => journal.list).pipe(Effect.provide(NodeTaskJournal.layer(directory)))

const count = <A>(items: ReadonlyArray<A>, key: (a: A) => string) => {
  const counts: Record<string, number> = {}
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1
  return counts
}

describe("video tasks under faults", () => {
  it.live(`${TASKS} submissions with dropped connections and failing status calls: none lost, none submitted twice`, () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const journalDirectory = mkdtempSync(join(tmpdir(), "switchboard-reliability-"))
      const sdk = NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, journalDirectory, retryBaseDelay: 0 })

      // Program 1, under faults.
      yield* emulator.setFaults(faults)
      const outcomes = yield* Effect.forEach(
        Array.from({ length: TASKS }, (_, i) => i),
        (i) => Effect.map(submitAndPoll(i), (outcome) => ({ i, outcome })),
        { concurrency: CONCURRENCY }
      ).pipe(Effect.provide(sdk))
      const phase1 = yield* emulator.requests
      yield* emulator.reset

      // No submission sent twice: per prompt, at most one attempt reached the
      // service, and only a 429 (surely not received) was ever retried.
      const submissions = new Map<number, Array<Emulator.Fault | undefined>>()
      for (const request of phase1.filter((r) => r.path === submitPath)) {
        const i = Number(/^video task (\d+)$/.exec(String((request.body as { messages: Array<{ content: string }> }).messages[0]?.content))?.[1])
        submissions.set(i, [...(submissions.get(i) ?? []), request.fault])
      }
      expect(submissions.size).toBe(TASKS)
      for (const [i, attempts] of submissions) {
        expect(attempts.filter(reachedService).length, `task ${i}: ${JSON.stringify(attempts)}`).toBeLessThanOrEqual(1)
        for (const fault of attempts.slice(0, -1)) expect(fault).toMatchObject({ _tag: "Status", status: 429 })
      }

      // Every id the SDK learned of either ended or is in the journal.
      const pollFailed = outcomes.flatMap(({ outcome }) => (outcome._tag === "PollFailed" ? [outcome.taskId] : []))
      const journaled = (yield* journalAt(journalDirectory)).map((entry) => entry.taskId)
      expect([...journaled].sort()).toEqual([...pollFailed].sort())

      // A submission whose reply was lost after the service took it: an
      // orphan the SDK cannot know the id of. It says so (the request was sent).
      const orphans = outcomes.filter(({ i, outcome }) =>
        outcome._tag === "SubmitFailed" && reachedService(submissions.get(i)?.at(-1))
      )
      for (const { outcome } of orphans) {
        expect(outcome._tag === "SubmitFailed" && outcome.error).toSatisfy((e: SwitchboardError.SwitchboardError) =>
          (e._tag === "TransportError" && e.sent) || e._tag === "ResponseDecodeError"
        )
      }

      // Program 2: a fresh layer over the same journal, no faults, resumes them all.
      const resumed = yield* Effect.gen(function*() {
        const { pending } = yield* Videos.resumePending(instantPolls)
        return yield* Effect.forEach(pending, (p) =>
          Stream.runLast(p.updates).pipe(Effect.map(Option.getOrUndefined), Effect.tap(() => Videos.complete(p.entry.taskId))), {
          concurrency: CONCURRENCY
        })
      }).pipe(Effect.provide(NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, journalDirectory })))
      expect(resumed.map((update) => update?._tag)).toEqual(pollFailed.map(() => "Succeeded"))
      expect(yield* journalAt(journalDirectory)).toEqual([])
      const phase2 = yield* emulator.requests
      expect(phase2.filter((r) => r.path === submitPath)).toEqual([])

      const tags = (o: Outcome) => (o._tag === "Succeeded" ? o._tag : `${o._tag}: ${o.error._tag}`)
      console.log(
        [
          `videos: ${TASKS} submissions, fault rate ${faults.rate} on submissions and status calls, seed ${SEED}`,
          `requests: ${phase1.filter((r) => r.path === submitPath).length} submissions, ${
            phase1.filter((r) => r.path === statusPath).length
          } status calls, ${phase1.filter((r) => r.fault !== undefined).length} faulted`,
          `faults: ${JSON.stringify(count(phase1.filter((r) => r.fault), (r) => `${r.path === submitPath ? "submit" : "status"} ${r.fault!._tag}`))}`,
          `outcomes: ${JSON.stringify(count(outcomes.map((o) => o.outcome), tags))}`,
          `journaled after program 1: ${journaled.length}; resumed by program 2: ${resumed.length} (all succeeded); orphans: ${orphans.length}`,
          `submissions that reached the service twice: 0`
        ].join("\n")
      )
    }).pipe(Effect.provide(Emulator.layer())), 60_000)
})
