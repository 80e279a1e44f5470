/**
 * The directory journal shared by several Node processes on one machine,
 * against one emulator on 127.0.0.1: concurrent submitters lose no task,
 * concurrent resumers poll each task once, and kill -9 in the middle of
 * writes leaves a journal that reads and no temporary files after the next
 * open. The processes run `journal/worker.ts`, bundled once with esbuild
 * into a temporary directory.
 */
import { Emulator } from "@switchboard/emulator"
import { TaskJournal } from "@switchboard/core"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundle } from "./journal/bundle.js"
import { NodeTaskJournal } from "../src/index.js"
import type { Job } from "./journal/worker.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
const runtime = ManagedRuntime.make(Emulator.layer())
let emulator: Context.Service.Shape<typeof Emulator.Emulator>
let workDir: string
let worker: string

beforeAll(async () => {
  emulator = await runtime.runPromise(Emulator.Emulator)
  workDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-journal-processes-"))
  worker = Path.join(workDir, "worker.mjs")
  await bundle(Path.join(here, "journal", "worker.ts"), worker)
}, 60_000)

const live = new Set<number>()

afterAll(async () => {
  for (const pid of live) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
  await runtime.dispose()
  Fs.rmSync(workDir, { recursive: true, force: true })
})

interface Worker {
  readonly lines: () => ReadonlyArray<Record<string, unknown>>
  /** Resolves once `count` lines are printed (rejects if the process ends first). */
  readonly waitForLines: (count: number) => Promise<void>
  readonly kill: () => void
  readonly exited: Promise<{ readonly code: number | null; readonly stderr: string }>
}

const startWorker = (journalDirectory: string, job: Job): Worker => {
  const child = spawn(process.execPath, [worker, JSON.stringify({ baseUrl: emulator.url, apiKey: emulator.apiKey, journalDirectory, job })], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  live.add(child.pid!)
  let stdout = ""
  let stderr = ""
  const listeners = new Set<() => void>()
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk
    listeners.forEach((f) => f())
  })
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on("close", (code) => {
      live.delete(child.pid!)
      listeners.forEach((f) => f())
      resolve({ code, stderr })
    })
  )
  const lines = () => stdout.split("\n").filter((line) => line.endsWith("}")).map((line) => JSON.parse(line) as Record<string, unknown>)
  return {
    lines,
    kill: () => child.kill("SIGKILL"),
    exited,
    waitForLines: (count) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (lines().length >= count) {
            listeners.delete(check)
            resolve()
          } else if (child.exitCode !== null || child.signalCode !== null) {
            listeners.delete(check)
            reject(new Error(`worker ended before ${count} lines:\n${stdout}\n${stderr}`))
          }
        }
        listeners.add(check)
        check()
      })
  }
}

/** The result line of a worker that ran to its end. */
const resultOf = async (w: Worker) => {
  const { code, stderr } = await w.exited
  expect(code, stderr).toBe(0)
  return w.lines().at(-1)!
}

const scan = (directory: string) =>
  Effect.runPromise(Effect.flatMap(TaskJournal.TaskJournal, (j) => j.scan).pipe(Effect.provide(NodeTaskJournal.layer(directory))))

const temporaryFiles = (directory: string) => Fs.readdirSync(directory).filter((name) => name.endsWith(".tmp"))

const newJournal = () => Fs.mkdtempSync(Path.join(workDir, "journal-"))

const submissionsAbout = async (prefix: string) =>
  (await runtime.runPromise(emulator.requests)).filter((r) =>
    r.path === "/v1/chat/completions" && JSON.stringify(r.body).includes(prefix)
  ).length

describe("a journal directory shared by processes", { timeout: 120_000 }, () => {
  it("3 processes × 60 submissions at concurrency 8 into one directory: 180/180 journaled", async () => {
    const journal = newJournal()
    const workers = [0, 1, 2].map((p) =>
      startWorker(journal, { _tag: "submit", count: 60, concurrency: 8, prefix: `shared p${p}`, layerPerCall: false })
    )
    const results = await Promise.all(workers.map(resultOf))
    const ids = results.flatMap((r) => r["ids"] as Array<string>)
    expect(results.flatMap((r) => r["failures"] as Array<string>)).toEqual([])
    expect(ids).toHaveLength(180)
    const listing = await scan(journal)
    expect(listing.entries.map((e) => e.taskId).sort()).toEqual([...ids].sort())
    expect(listing.quarantined).toEqual([])
    expect(temporaryFiles(journal)).toEqual([])
    expect(await submissionsAbout("shared p")).toBe(180)
    console.log(`journal: 3 processes x 60 submissions, concurrency 8: ${listing.entries.length}/180 journaled`)
  })

  it("one process, a new layer per call, 100 concurrent submissions: 100/100 journaled, no JournalError", async () => {
    const journal = newJournal()
    const result = await resultOf(
      startWorker(journal, { _tag: "submit", count: 100, concurrency: 100, prefix: "per-call", layerPerCall: true })
    )
    expect(result["failures"]).toEqual([])
    const listing = await scan(journal)
    expect(listing.entries.map((e) => e.taskId).sort()).toEqual([...(result["ids"] as Array<string>)].sort())
    expect(listing.entries).toHaveLength(100)
    console.log(`journal: 1 process, a layer per call, 100 concurrent submissions: ${listing.entries.length}/100 journaled`)
  })

  it("2 processes resuming 40 pending tasks from one directory: each task polled by one process, none left", async () => {
    const journal = newJournal()
    const submitted = await resultOf(
      startWorker(journal, { _tag: "submit", count: 40, concurrency: 8, prefix: "slow resume", layerPerCall: false })
    )
    const ids = submitted["ids"] as Array<string>
    expect(ids).toHaveLength(40)
    const before = await runtime.runPromise(emulator.requests)
    const go = Path.join(journal, "..", `${Path.basename(journal)}.go`)
    const resumers = [startWorker(journal, { _tag: "resume", go }), startWorker(journal, { _tag: "resume", go })]
    await Promise.all(resumers.map((w) => w.waitForLines(1)))
    Fs.writeFileSync(go, "")
    const [a, b] = await Promise.all(resumers.map(resultOf))
    const byA = a!["finished"] as Array<string>
    const byB = b!["finished"] as Array<string>
    // Disjoint, and together every task.
    expect(byA.filter((id) => byB.includes(id))).toEqual([])
    expect([...byA, ...byB].sort()).toEqual([...ids].sort())
    // A "slow" task takes 10 in-progress polls and a terminal one: 11 status
    // calls when one process polls it, more if two did.
    const statusCalls = (await runtime.runPromise(emulator.requests)).slice(before.length).filter((r) =>
      r.path === "/v1/chat/task/status"
    )
    const perTask = new Map<string, number>()
    for (const r of statusCalls) {
      const id = (r.body as { task_id: string }).task_id
      perTask.set(id, (perTask.get(id) ?? 0) + 1)
    }
    expect([...perTask.keys()].sort()).toEqual([...ids].sort())
    expect(new Set(perTask.values())).toEqual(new Set([11]))
    expect((await scan(journal)).entries).toEqual([])
    console.log(
      `journal: 2 processes resuming 40 tasks: ${byA.length} + ${byB.length} resumed (busy elsewhere: ${a!["busy"]}, ${b!["busy"]}), ` +
        `${statusCalls.length} status calls (11 per task), 0 left`
    )
  })

  it("25 × kill -9 in a submit loop: the journal reads each time, no temporary file after the next open", async () => {
    const journal = newJournal()
    let strays = 0
    for (let round = 0; round < 25; round++) {
      const w = startWorker(journal, { _tag: "loop", concurrency: 4, prefix: `killed ${round}` })
      // Killed after a varying number of submissions, while others are in flight.
      await w.waitForLines(1 + (round % 5) * 3)
      w.kill()
      await w.exited
      strays += temporaryFiles(journal).length
      const listing = await scan(journal)
      expect(listing.quarantined).toEqual([])
      expect(temporaryFiles(journal)).toEqual([])
      const printed = w.lines().flatMap((line) => (typeof line["id"] === "string" ? [line["id"]] : []))
      const journaled = new Set(listing.entries.map((e) => e.taskId))
      for (const id of printed) expect(journaled.has(id), id).toBe(true)
    }
    console.log(`journal: 25 x kill -9 in a submit loop: readable every time; ${strays} temporary files found and removed on the next open`)
  })
})
