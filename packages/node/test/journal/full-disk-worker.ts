/**
 * Run by `journal-full-disk.test.ts` inside its own mount namespace, on a
 * small tmpfs mounted at `mount`: fills the file system until `freeBlocks`
 * blocks are left, then submits one video task with the directory journal
 * in it. Prints one JSON line: the task id, or the failure's tag, message
 * and code; and the journal's records as read afterwards.
 */
import { TaskJournal, Videos } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { NodeSwitchboard } from "../../src/index.js"

interface Args {
  readonly baseUrl: string
  readonly apiKey: string
  readonly mount: string
  readonly freeBlocks: number
}

const args = JSON.parse(process.argv[2]!) as Args
const journalDirectory = Path.join(args.mount, "journal")
Fs.mkdirSync(journalDirectory)

// Fill: one file as large as leaves `freeBlocks`, then single blocks until exactly that many are left.
const free = () => Fs.statfsSync(args.mount).bavail
const { bsize } = Fs.statfsSync(args.mount)
Fs.writeFileSync(Path.join(args.mount, "filler"), new Uint8Array(Math.max(0, free() - args.freeBlocks) * bsize))
for (let i = 0; free() > args.freeBlocks; i++) Fs.writeFileSync(Path.join(args.mount, `filler-${i}`), new Uint8Array(bsize))

const program = Effect.gen(function*() {
  const submitted = yield* Effect.result(Videos.submit({ model: "video-1", prompt: "a paid task on a full disk" }))
  const entries = yield* Effect.orElseSucceed(Effect.flatMap(TaskJournal.TaskJournal, (journal) => journal.list), () => [])
  return submitted._tag === "Success"
    ? { taskId: submitted.success, entries }
    : { error: submitted.failure._tag, message: submitted.failure.message, code: "code" in submitted.failure ? submitted.failure.code : undefined, entries }
}).pipe(
  Effect.provide(NodeSwitchboard.layer({ baseUrl: args.baseUrl, apiKey: args.apiKey, journalDirectory }))
)

Effect.runPromise(program).then((result) => process.stdout.write(`${JSON.stringify(result)}\n`))
