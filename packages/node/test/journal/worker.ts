/**
 * A small program the journal tests run as separate Node processes (bundled
 * with esbuild), each over one journal directory and the test's emulator.
 * Its one argument is a JSON `Job`; it prints one JSON line per result.
 *
 * - `submit`: `count` submissions, `concurrency` at a time (a new layer per
 *   submission with `layerPerCall`); prints the ids and the failures.
 * - `resume`: waits for the file `go` (so several start together), resumes
 *   what no other process follows, polls each to its end, completes it;
 *   prints the ids it finished and how many were busy elsewhere.
 * - `loop`: submits without end, printing each id (killed by the test).
 */
import { Videos } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import { NodeSwitchboard } from "../../src/index.js"

export type Job =
  | { readonly _tag: "submit"; readonly count: number; readonly concurrency: number; readonly prefix: string; readonly layerPerCall: boolean }
  | { readonly _tag: "resume"; readonly go: string }
  | { readonly _tag: "loop"; readonly concurrency: number; readonly prefix: string }

interface Args {
  readonly baseUrl: string
  readonly apiKey: string
  readonly journalDirectory: string
  readonly job: Job
}

const args = JSON.parse(process.argv[2]!) as Args
const sdk = NodeSwitchboard.layer({
  baseUrl: args.baseUrl,
  apiKey: args.apiKey,
  journalDirectory: args.journalDirectory,
  pollSchedule: Schedule.spaced("1 millis")
})
const print = (value: unknown) => Effect.sync(() => process.stdout.write(`${JSON.stringify(value)}\n`))

const submitOne = (prompt: string) => Effect.result(Videos.submit({ model: "video-1", prompt }))

const submit = (job: Extract<Job, { _tag: "submit" }>) =>
  Effect.gen(function*() {
    const one = (i: number) =>
      job.layerPerCall ? Effect.provide(submitOne(`${job.prefix} ${i}`), sdk) : submitOne(`${job.prefix} ${i}`)
    const results = yield* Effect.forEach(Array.from({ length: job.count }, (_, i) => i), one, { concurrency: job.concurrency })
    const ids = results.flatMap((r) => (r._tag === "Success" ? [r.success] : []))
    const failures = results.flatMap((r) => (r._tag === "Failure" ? [`${r.failure._tag}: ${r.failure.message}`] : []))
    yield* print({ ids, failures })
  })

const waitFor = (file: string): Effect.Effect<void> =>
  Effect.suspend(() => (Fs.existsSync(file) ? Effect.void : Effect.andThen(Effect.sleep("5 millis"), waitFor(file))))

const resume = (job: Extract<Job, { _tag: "resume" }>) =>
  Effect.gen(function*() {
    yield* print({ ready: true })
    yield* waitFor(job.go)
    const { busy, pending, quarantined } = yield* Videos.resumePending()
    const finished = yield* Effect.forEach(pending, ({ entry, updates }) =>
      Stream.runDrain(updates).pipe(Effect.andThen(Videos.complete(entry.taskId)), Effect.as(entry.taskId)), { concurrency: 8 })
    yield* print({ finished, busy: busy.length, quarantined: quarantined.length })
  })

const loop = (job: Extract<Job, { _tag: "loop" }>) =>
  Effect.forEach(Array.from({ length: job.concurrency }, (_, lane) => lane), (lane) =>
    Effect.forever(
      Effect.flatMap(submitOne(`${job.prefix} ${lane}`), (r) => print(r._tag === "Success" ? { id: r.success } : { failure: r.failure._tag }))
    ), { concurrency: "unbounded", discard: true })

const program = (job: Job): Effect.Effect<void, unknown, Videos.Videos> => {
  switch (job._tag) {
    case "submit":
      return submit(job)
    case "resume":
      return resume(job)
    case "loop":
      return loop(job)
  }
}

Effect.runPromise(Effect.provide(program(args.job), sdk)).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  }
)
