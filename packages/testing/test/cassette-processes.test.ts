/**
 * Two real processes recording into one cassette at once lose nothing: each
 * write merges with the file under its lock and replaces it whole. The
 * children run the built package (dist), against one emulator.
 */
import { Emulator } from "@switchboard/emulator"
import * as Processes from "@switchboard/test-support/Processes"
import * as ManagedRuntime from "effect/ManagedRuntime"
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

it("two processes recording into one file lose nothing", async () => {
  const emulator = await runtime.runPromise(Emulator.Emulator)
  const file = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-cassette-")), "shared.json")
  const child = (name: string) =>
    Processes.start(Path.join(here, "fixtures/record-child.mjs"), [file, emulator.url, emulator.apiKey, name, "15"], {
      cwd: here,
      env: { PATH: process.env["PATH"] }
    })
  // Both read the file as it was before either recorded ("record" replaces
  // that), then record at once: a late start would replace the other's first
  // recordings, as the mode says.
  const children = [child("left"), child("right")]
  await Promise.all(children.map((c) => c.waitFor(/ready/, "stdout")))
  for (const c of children) c.signal("SIGUSR2")
  const results = await Promise.all(children.map((c) => c.exited))
  expect(results.map((r) => [r.code, r.stdout.trim(), r.stderr])).toEqual([[0, "ready\ndone", ""], [0, "ready\ndone", ""]])
  const saved = JSON.parse(Fs.readFileSync(file, "utf8")) as {
    interactions: Array<{ request: { body: { messages: Array<{ content: string }> } } }>
  }
  const prompts = saved.interactions.map((i) => i.request.body.messages[0]!.content).sort()
  const expected = ["left", "right"].flatMap((name) => Array.from({ length: 15 }, (_, i) => `${name} ${i}`)).sort()
  expect(prompts).toEqual(expected)
  expect(Fs.readdirSync(Path.dirname(file))).toEqual(["shared.json"])
}, 120_000)
