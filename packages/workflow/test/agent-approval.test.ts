/**
 * An agent run on a fleet of two Postgres runners: it pauses for the
 * approval of a tool call, the runner holding it is killed (SIGKILL), the
 * call is approved: the run ends on the other runner, the tool run once and
 * each model call made once.
 */
import { Toolkit } from "@switchboard/agent"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schedule from "effect/Schedule"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentWorkflow, Cluster } from "../src/index.js"
import { type Postgres, settled, startPostgres } from "./postgres.js"
import { build, readLog, startRunner, stopAll } from "./processes.js"

let postgres: Postgres | undefined
let runtime: ManagedRuntime.ManagedRuntime<Emulator.Emulator | import("@effect/workflow/WorkflowEngine").WorkflowEngine, unknown> | undefined

beforeAll(() => {
  postgres = startPostgres(25000 + ((process.pid + 2500) % 5000))
  build()
}, 240_000)
afterAll(async () => {
  await stopAll()
  await runtime?.dispose()
  postgres?.stop()
})

/** The same workflow the runners register; a client needs only its name and schemas. */
const agent = AgentWorkflow.make({ name: "FleetTestAgent", toolkit: Toolkit.make() })

describe("an agent run on a fleet", () => {
  it("waits for an approval across a killed runner and runs the tool once", async () => {
    const database = await Effect.runPromise(Cluster.parseDatabase(postgres!.url))
    runtime = ManagedRuntime.make(Layer.merge(Emulator.layer(), Cluster.layerClient({ database })))
    const emulator = await runtime.runPromise(Emulator.Emulator)
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-agent-fleet-"))
    const log = Path.join(dir, "log.jsonl")
    const env = { DATABASE: postgres!.url, BASE_URL: emulator.url, API_KEY: emulator.apiKey, LOG: log }
    try {
      const base = 22000 + (process.pid % 1000) * 2
      const runners = [0, 1].map((i) => startRunner({ ...env, PORT: String(base + i) }))
      await Promise.all(runners.map((runner) => runner.waitFor(/ready/)))
      await settled(postgres!.url, 2)

      const key = "agent-approval-1"
      await runtime.runPromise(agent.start(key, "gpt-4o-mini", [{ role: "user", content: `Use delete_file({"path": "/tmp/a.txt"})` }]))
      const paused = await Promise.any(runners.map((runner) => runner.waitFor(/approval \S+/).then(() => runner)))
      const token = paused.stdout().match(/approval (\S+)/)![1]!
      // Paused: the run has stored that it waits (its request for approval with it).
      await runtime.runPromise(
        agent.result(key).pipe(Effect.repeat({ until: (r) => r?._tag === "Suspended", schedule: Schedule.spaced("200 millis") }))
      )
      await paused.kill()
      const survivor = runners.find((runner) => runner !== paused)!

      await runtime.runPromise(agent.decide(token, { [readLog(log).find((e) => e.ev === "approval")!.pending![0]!]: "approve" }))
      const result = await runtime.runPromise(
        agent.result(key).pipe(Effect.repeat({ until: (r) => r?._tag === "Complete", schedule: Schedule.spaced("500 millis") }), Effect.zipRight(agent.result(key)))
      )
      expect(result?._tag).toBe("Complete")
      const exit = result?._tag === "Complete" ? result.exit : undefined
      expect(exit?._tag).toBe("Success")
      const outcome = exit?._tag === "Success" ? exit.value : undefined
      expect(outcome?.status).toBe("completed")
      expect(outcome?.transcript.some((m) => m.role === "tool" && JSON.stringify(m.content).includes("/tmp/a.txt"))).toBe(true)

      const events = readLog(log)
      expect(events.filter((e) => e.ev === "approval").map((e) => e.pid)).toEqual([paused.pid])
      expect(events.filter((e) => e.ev === "tool").map((e) => e.pid)).toEqual([survivor.pid])
      const requests = await runtime.runPromise(emulator.requests)
      // The call before the pause and the one after the tool: none repeated.
      expect(requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(2)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
