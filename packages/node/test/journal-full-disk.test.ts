/**
 * A paid task is never unrecorded on a nearly full disk (issue 33, case 4).
 * A real file system: a 256 KiB tmpfs mounted in a mount namespace of the
 * worker's own (`unshare -rm`: no privilege needed where user namespaces
 * are allowed), filled by the worker until the blocks the case needs are
 * left, then one `Videos.submit` with the directory journal on it, against
 * the emulator on 127.0.0.1.
 *
 * - one block free: the record's room is reserved before sending (a probe
 *   of two bytes passed here, then the claim took the block and the record
 *   failed): the task is sent once and recorded;
 * - no block free: nothing is sent, and the `JournalError` names ENOSPC.
 */
import { Emulator } from "@switchboard/emulator"
import type * as Context from "effect/Context"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundle } from "./journal/bundle.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
const runtime = ManagedRuntime.make(Emulator.layer())
let emulator: Context.Service.Shape<typeof Emulator.Emulator>
let workDir: string
let worker: string

beforeAll(async () => {
  emulator = await runtime.runPromise(Emulator.Emulator)
  workDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-full-disk-"))
  worker = Path.join(workDir, "worker.mjs")
  await bundle(Path.join(here, "journal", "full-disk-worker.ts"), worker)
}, 60_000)

afterAll(async () => {
  await runtime.dispose()
  Fs.rmSync(workDir, { recursive: true, force: true })
})

interface Result {
  readonly taskId?: string
  readonly error?: string
  readonly message?: string
  readonly code?: string
  readonly entries: ReadonlyArray<{ readonly taskId: string }>
}

/** Runs the worker on a fresh tmpfs with `freeBlocks` blocks left; its result line. */
const onFullDisk = (freeBlocks: number) =>
  new Promise<Result>((resolve, reject) => {
    const mount = Fs.mkdtempSync(Path.join(workDir, "mount-"))
    const args = JSON.stringify({ baseUrl: emulator.url, apiKey: emulator.apiKey, mount, freeBlocks })
    const script = `mount -t tmpfs -o size=256k switchboard-test "$1" && exec "$2" "$3" "$4"`
    const child = spawn("unshare", ["-rm", "sh", "-c", script, "sh", mount, process.execPath, worker, args], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => {
      const line = stdout.trim().split("\n").at(-1)
      if (code !== 0 || line === undefined || line === "") reject(new Error(`worker exited ${code}:\n${stdout}\n${stderr}`))
      else resolve(JSON.parse(line) as Result)
    })
  })

const submissions = async () =>
  (await runtime.runPromise(emulator.requests)).filter((r) => JSON.stringify(r.body).includes("a paid task on a full disk")).length

describe("a video task on a nearly full disk", { timeout: 120_000 }, () => {
  it("one block free: the task is sent once and recorded", async () => {
    const before = await submissions()
    const result = await onFullDisk(1)
    expect(result.error, result.message).toBeUndefined()
    expect(await submissions()).toBe(before + 1)
    expect(result.entries.map((e) => e.taskId)).toEqual([result.taskId])
  })

  it("no block free: nothing is sent, and the JournalError names ENOSPC", async () => {
    const before = await submissions()
    const result = await onFullDisk(0)
    expect(result.error).toBe("JournalError")
    expect(result.code).toBe("ENOSPC")
    expect(result.message).toContain("ENOSPC")
    expect(await submissions()).toBe(before)
    expect(result.entries).toEqual([])
  })
})
