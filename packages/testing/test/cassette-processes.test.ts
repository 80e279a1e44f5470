/**
 * Real processes recording into one cassette lose nothing and duplicate
 * nothing: each write merges with the file under its lock and replaces it
 * whole, and a recording replaces only the earlier recording of the same
 * request at the same place. The children run the built package (dist),
 * against one emulator; the test decides, by what they print, what is on
 * disk when each starts.
 */
import { Emulator } from "@switchboard/emulator"
import * as Processes from "@switchboard/test-support/Processes"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, expect, it } from "vitest"

const here = Path.dirname(fileURLToPath(import.meta.url))
const runtime = ManagedRuntime.make(Emulator.layer())

beforeAll(() => Processes.build(Path.join(Processes.repoRoot, "packages/testing/tsconfig.build.json")), 300_000)
afterAll(async () => {
  await Processes.stopAll()
  await runtime.dispose()
})

const tempFile = () => Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-cassette-")), "shared.json")

/**
 * A child recording `count` calls named `name` into `file`, started (its
 * layer built) but waiting for SIGUSR2; `pause` holds it still at one point
 * of its write (fixtures/pause.mjs).
 */
const child = async (
  file: string,
  name: string,
  count: number,
  mode = "record",
  pause?: { readonly at: "owner" | "read" | "rename"; readonly fifo: string }
) => {
  const emulator = await runtime.runPromise(Emulator.Emulator)
  const running = Processes.start(
    Path.join(here, "fixtures/record-child.mjs"),
    [file, emulator.url, emulator.apiKey, name, String(count), mode],
    {
      cwd: here,
      env: { PATH: process.env["PATH"], ...(pause && { PAUSE_AT: pause.at, PAUSE_FIFO: pause.fifo, PAUSE_FILE: file }) },
      node: pause && ["--import", Path.join(here, "fixtures/pause.mjs")]
    }
  )
  await running.waitFor(/ready/, "stdout")
  return running
}

const finished = async (children: ReadonlyArray<Processes.Running>) => {
  const results = await Promise.all(children.map((c) => c.exited))
  for (const result of results) expect([result.code, result.stdout.trim().split("\n").at(-1), result.stderr]).toEqual([0, "done", ""])
}

/** The prompts recorded in `file`, in the file's order. */
const prompts = (file: string): Array<string> =>
  (JSON.parse(Fs.readFileSync(file, "utf8")) as {
    interactions: Array<{ request: { body: { messages: Array<{ content: string }> } } }>
  }).interactions.map((i) => i.request.body.messages[0]!.content)

const named = (name: string, count: number) => Array.from({ length: count }, (_, i) => `${name} ${i}`)

it("two processes recording into one file at once lose nothing", async () => {
  const file = tempFile()
  const children = [await child(file, "left", 15), await child(file, "right", 15)]
  for (const c of children) c.signal("SIGUSR2")
  await finished(children)
  expect(prompts(file).sort()).toEqual([...named("left", 15), ...named("right", 15)].sort())
  expect(Fs.readdirSync(Path.dirname(file))).toEqual(["shared.json"])
}, 120_000)

it("a process that starts recording once another has written keeps the other's recordings", async () => {
  // A test runner's second worker: its layer is built when the first one's
  // recordings are already on disk, and it records while the first goes on.
  const file = tempFile()
  const first = await child(file, "first", 10)
  first.signal("SIGUSR2")
  await first.waitFor(/called first 4\n/, "stdout")
  const second = await child(file, "second", 10)
  second.signal("SIGUSR2")
  await finished([first, second])
  expect(prompts(file).sort()).toEqual([...named("first", 10), ...named("second", 10)].sort())
}, 120_000)

it("two processes recording the same missing requests (record-if-missing) record each once", async () => {
  const file = tempFile()
  const children = [await child(file, "same", 8, "record-if-missing"), await child(file, "same", 8, "record-if-missing")]
  for (const c of children) c.signal("SIGUSR2")
  await finished(children)
  expect(prompts(file).sort()).toEqual(named("same", 8).sort())
}, 120_000)

// A writer that hangs holding the lock (a debugger, a laptop's lid closed
// during a recording run, Ctrl-Z): once its lock is 30 s old a waiter takes
// it over and writes; then the hung one wakes up and goes on with its write.
// The lock's time stamp is set back rather than waited for.
const hangs = [["owner", "before naming itself in it"], ["read", "just after its read"], ["rename", "just before its rename"]] as const
for (const [at, where] of hangs) {
  it(`a writer hung holding the lock (${where}) past 30 s, taken over, then woken: both recordings are kept`, async () => {
    const file = tempFile()
    const before = await child(file, "before", 1)
    before.signal("SIGUSR2")
    await finished([before])
    const fifo = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-pause-")), "go")
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0)
    const hung = await child(file, "hung", 1, "record", { at, fifo })
    hung.signal("SIGUSR2")
    await hung.waitFor(/paused/, "stdout")
    const past = new Date(Date.now() - 60_000)
    Fs.utimesSync(`${file}.lock`, past, past)
    const successor = await child(file, "successor", 1)
    successor.signal("SIGUSR2")
    await finished([successor])
    expect(prompts(file).sort()).toEqual(["before 0", "successor 0"])
    await Fs.promises.writeFile(fifo, "go")
    await finished([hung])
    expect(prompts(file).sort()).toEqual(["before 0", "hung 0", "successor 0"])
    expect(Fs.readdirSync(Path.dirname(file))).toEqual(["shared.json"])
    Fs.rmSync(Path.dirname(fifo), { recursive: true, force: true })
  }, 120_000)
}
