/**
 * A fleet on Postgres: 3 runner processes, 200 video tasks, 10 % of status
 * calls faulted by the emulator, one runner killed (SIGKILL) midway. Every
 * task ends, with exactly one submission each, polled by one runner at a time.
 */
import { Emulator } from "@switchboard/emulator"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { awaitRequests, checkPolls } from "./fleet.js"
import { type Postgres, settled, startPostgres } from "./postgres.js"
import { build, readLog, startRunner, stopAll } from "./processes.js"

const runtime = ManagedRuntime.make(
  Emulator.layer({
    faults: { paths: ["/v1/chat/task/status"], rate: 0.1, random: [{ _tag: "Status", status: 503 }], seed: 19 }
  })
)
let postgres: Postgres | undefined

beforeAll(() => {
  postgres = startPostgres(25000 + (process.pid % 5000))
  build()
}, 240_000)
afterAll(async () => {
  await stopAll()
  postgres?.stop()
  await runtime.dispose()
})

describe("a fleet of runners on Postgres", () => {
  it("finishes 200/200 with one runner killed, exactly 200 submissions", async () => {
    const emulator = await runtime.runPromise(Emulator.Emulator)
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-fleet-"))
    const log = Path.join(dir, "log.jsonl")
    const env = {
      DATABASE: postgres!.url,
      BASE_URL: emulator.url,
      API_KEY: emulator.apiKey,
      LOG: log,
      COUNT: "200",
      PREFIX: "fleet",
      POLL_MS: "100"
    }
    try {
      const base = 21000 + (process.pid % 1000) * 3
      const runners = [0, 1, 2].map((i) => startRunner({ ...env, PORT: String(base + i) }))
      await Promise.all(runners.map((runner) => runner.waitFor(/ready/)))
      // Tasks start once the shards are shared out: a shard handed over while
      // its submission is in flight may submit again (see docs/fleet.md).
      await settled(postgres!.url, 3)
      const client = startRunner({ ...env, CLIENT: "1", START: "1", FOLLOW: "1" })
      await awaitRequests(runtime, emulator, (submissions, polls) => submissions >= 200 && polls >= 250)
      const t0 = Date.now()
      const victim = runners[2]!
      expect(readLog(log).some((e) => e.pid === victim.pid)).toBe(true)
      await victim.kill()
      console.log(`killed at ${t0}`)
      const out = await client.waitFor(/complete /)
      console.log(`the survivors finished ${Date.now() - t0} ms after the kill`)
      const ends = JSON.parse(out.match(/complete (.*)/)![1]!) as ReadonlyArray<{ key: string; exit: string }>

      const requests = await runtime.runPromise(emulator.requests)
      const submissions = requests.filter((r) => r.path.endsWith("/chat/completions")).length
      const faulted = requests.filter((r) => r.fault !== undefined).length
      const events = readLog(log)
      const taskIds = events.filter((e) => e.ev === "submit").map((e) => e.taskId)
      const duplicates = submissions - 200
      const { handovers, repeated } = checkPolls(events)
      const byVictim = new Set(events.filter((e) => e.pid === victim.pid && e.ev === "status").map((e) => e.taskId)).size
      console.log(
        `postgres fleet: ${ends.filter((e) => e.exit === "Success").length}/200 ended, ${submissions} submissions, ` +
          `${duplicates} duplicates, ${faulted} status calls faulted, ` +
          `${byVictim} tasks polled by the killed runner, ${handovers} handovers, ${repeated} polls repeated`
      )
      expect(ends.filter((e) => e.exit === "Success")).toHaveLength(200)
      expect(submissions).toBe(200)
      expect(new Set(taskIds).size).toBe(200)
      expect(taskIds).toHaveLength(200)
      expect(faulted).toBeGreaterThan(0)
      expect(byVictim).toBeGreaterThan(0)
    } finally {
      if (process.env.KEEP_FLEET_LOG === undefined) Fs.rmSync(dir, { recursive: true, force: true })
      else console.log(dir)
    }
  }, 180_000)
})
