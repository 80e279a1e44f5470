/**
 * One runner on a sqlite file, killed with SIGKILL while it polls 50 video
 * tasks, then started again: every task ends, with one submission each and
 * no activity run again once a later one had started.
 */
import { Emulator } from "@switchboard/emulator"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { awaitRequests, checkPolls } from "./fleet.js"
import { build, readLog, startRunner, stopAll } from "./processes.js"

const runtime = ManagedRuntime.make(Emulator.layer())

beforeAll(build, 240_000)
afterAll(async () => {
  await stopAll()
  await runtime.dispose()
})

describe("a single runner on sqlite", () => {
  it("finishes 50/50 after a SIGKILL during polling, with 50 submissions", async () => {
    const emulator = await runtime.runPromise(Emulator.Emulator)
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-sqlite-runner-"))
    const log = Path.join(dir, "log.jsonl")
    const env = {
      DATABASE: `sqlite:${Path.join(dir, "workflows.sqlite")}`,
      BASE_URL: emulator.url,
      API_KEY: emulator.apiKey,
      LOG: log,
      COUNT: "50",
      PREFIX: "clip",
      SLOW: "1",
      POLL_MS: "100"
    }
    try {
      const first = startRunner({ ...env, START: "1" })
      await first.waitFor(/started/)
      // Every task submitted, a third of the polls made: then the crash.
      await awaitRequests(runtime, emulator, (submissions, polls) => submissions >= 50 && polls >= 180)
      await first.kill()
      const beforeKill = readLog(log)
      expect(beforeKill.filter((e) => e.ev === "status-end" && e.tag === "Succeeded").length).toBeLessThan(50)

      const second = startRunner({ ...env, FOLLOW: "1" })
      const out = await second.waitFor(/complete /)
      await second.kill()
      const ends = JSON.parse(out.match(/complete (.*)/)![1]!) as ReadonlyArray<{ key: string; exit: string }>
      expect(ends.filter((end) => end.exit === "Success")).toHaveLength(50)

      const requests = await runtime.runPromise(emulator.requests)
      expect(requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(50)
      const events = readLog(log)
      expect(events.filter((e) => e.ev === "submit" && e.pid === second.pid)).toHaveLength(0)
      const { repeated } = checkPolls(events)
      console.log(`sqlite runner: 50/50 ended, 50 submissions, ${repeated} status polls repeated after the kill`)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
