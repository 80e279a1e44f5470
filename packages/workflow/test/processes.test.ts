/**
 * The workflows across real processes (`fixtures/runner.mjs` over the built
 * package), against the emulator in this process, one scenario after the
 * other (one build, one private Postgres):
 * - one runner on sqlite, killed (SIGKILL) while polling 50 tasks (once
 *   every submission is stored), started again;
 * - a fleet of 3 runners on Postgres, 200 tasks, 10 % status faults, one
 *   killed whenever the machine's speed puts it: the verdict is drawn from
 *   what the kill found (the runners' log, the emulator's record), so a
 *   submission in flight there may end in `SubmissionOutcomeUnknownError`;
 * - an agent run paused for approval, its runner killed, then approved.
 * Each prints its figures.
 */
import { Emulator } from "@switchboard/emulator"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schedule from "effect/Schedule"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { AgentWorkflow, Cluster } from "../src/index.js"
import { awaitRequests, checkPolls } from "./fleet.js"
import * as Ports from "@switchboard/test-support/Ports"
import { type Postgres, settled, startPostgres } from "./postgres.js"
import { build, type Exited, explainAfter, type LogEvent, readLog, type Runner, startRunner, stopAll } from "./processes.js"

let postgres: Postgres | undefined
const dirs: Array<string> = []

beforeAll(() => {
  postgres = startPostgres(Ports.postgres.processes())
  build()
}, 240_000)
afterAll(async () => {
  await stopAll()
  postgres?.stop()
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const tempDir = (prefix: string) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), `switchboard-${prefix}-`))
  dirs.push(dir)
  return dir
}

/** Ports outside the ephemeral range, apart for each scenario and from other files' (test-support/Ports.ts). */
const portBase = Ports.runner

/** How many tasks have been polled at least once. */
const polledTasks = (events: ReadonlyArray<LogEvent>) => new Set(events.filter((e) => e.ev === "status").map((e) => e.taskId)).size

const kill = (runners: ReadonlyArray<Runner>) => Promise.all(runners.map((runner) => runner.kill()))

describe("a single runner on sqlite", () => {
  const runtime = ManagedRuntime.make(Emulator.layer())
  afterAll(() => runtime.dispose())

  it("finishes 50/50 after a SIGKILL during polling, with 50 submissions", async () => {
    const emulator = await runtime.runPromise(Emulator.Emulator)
    const dir = tempDir("sqlite-runner")
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
    onTestFinished(stopAll)
    const first = startRunner({ ...env, START: "1" })
    await first.waitFor(/^started /m, "stdout")
    // Every task's submission stored (a task is polled only once its task id
    // is), a third of the polls made: then the crash, while polling and never
    // while submitting, whatever the machine's speed.
    await awaitRequests(runtime, emulator, (_, polls) => polls >= 180 && polledTasks(readLog(log)) === 50)
    await first.kill()
    expect(readLog(log).filter((e) => e.ev === "status-end" && e.tag === "Succeeded").length).toBeLessThan(50)

    const second = startRunner({ ...env, FOLLOW: "1" })
    const out = await second.waitFor(/^complete .*\n/m, "stdout")
    await second.kill()
    const ends = JSON.parse(out.match(/complete (.*)/)![1]!) as ReadonlyArray<{ key: string; exit: string }>
    const submissions = (await runtime.runPromise(emulator.requests)).filter((r) => r.path.endsWith("/chat/completions")).length
    const events = readLog(log)
    const { repeated } = checkPolls(events)
    console.log(`sqlite runner: ${ends.filter((e) => e.exit === "Success").length}/50 ended, ${submissions} submissions, ${repeated} polls repeated after the kill`)
    expect(ends.filter((end) => end.exit === "Success")).toHaveLength(50)
    expect(submissions).toBe(50)
    expect(events.filter((e) => e.ev === "submit" && e.pid === second.pid)).toHaveLength(0)
  }, 180_000)
})

describe("a fleet of runners on Postgres", () => {
  const runtime = ManagedRuntime.make(
    Emulator.layer({
      faults: { paths: ["/v1/chat/task/status"], rate: 0.1, random: [{ _tag: "Status", status: 503 }], seed: 19 }
    })
  )
  afterAll(() => runtime.dispose())

  it("one runner killed: each of 200 tasks ends with its video, or in SubmissionOutcomeUnknownError when its submission's answer was not stored; none sent twice", async () => {
    const emulator = await runtime.runPromise(Emulator.Emulator)
    const log = Path.join(tempDir("fleet"), "log.jsonl")
    const database = postgres!.database("fleet")
    const env = { DATABASE: database, BASE_URL: emulator.url, API_KEY: emulator.apiKey, LOG: log, COUNT: "200", PREFIX: "fleet", POLL_MS: "100" }
    const runners = [0, 1, 2].map((i) => startRunner({ ...env, PORT: String(portBase(i)) }))
    // Whatever happens, no runner outlives its scenario (the next one shares the machine).
    onTestFinished(stopAll)
    let client: Runner | undefined
    const ended = new Map<number, Exited>()
    for (const runner of runners) void runner.exited.then((e) => ended.set(runner.pid, e))
    // Past 450 s from here, fail saying where things stand rather than with a bare timeout.
    const out = await explainAfter(450_000, (async () => {
      await Promise.all(runners.map((runner) => runner.waitFor(/^ready$/m, "stdout")))
      // Tasks start once the shards are shared out: a shard handed over while
      // its submission is in flight may submit again (see docs/fleet.md).
      await settled(database, 3)
      client = startRunner({ ...env, CLIENT: "1", START: "1", FOLLOW: "1" })
      void client.exited.then((e) => ended.set(client!.pid, e))
      // The victim polled 20 times: it holds tasks. Whatever else is under way
      // then (submissions too, on a fast machine or a slow one) is what the
      // verdict is drawn from.
      const victim = runners[2]!
      await awaitRequests(runtime, emulator, () => readLog(log).filter((e) => e.ev === "status" && e.pid === victim.pid).length >= 20)
      await victim.kill()
      return client.waitFor(/^complete .*\n/m, "stdout")
    })(), async () => {
      const requests = await runtime.runPromise(emulator.requests)
      const exits = [...runners, ...(client ? [client] : [])].map((r) => {
        const e = ended.get(r.pid)
        return `${r.pid}: ${e ? `exited ${e.code ?? e.signal}: ${(e.stdout + e.stderr).slice(-600)}` : "running"}`
      })
      return `the fleet did not finish: ${client?.stdout().match(/progress \d+\/\d+ ended/g)?.at(-1) ?? "no progress line"}, ` +
        `${client?.stdout().match(/^ended .*/gm)?.slice(0, 5).join("; ") ?? "none ended in a failure"}, ` +
        `${requests.filter((r) => r.path.endsWith("/chat/completions")).length} submissions, ` +
        `${requests.filter((r) => r.path.endsWith("/chat/task/status")).length} status calls; processes: ${exits.join("; ")}`
    })
    const victim = runners[2]!
    await kill([client!, ...runners])
    const ends = JSON.parse(out.match(/complete (.*)/)![1]!) as ReadonlyArray<{ key: string; exit: string; error?: string }>

    const requests = await runtime.runPromise(emulator.requests)
    const sent = requests.filter((r) => r.path.endsWith("/chat/completions"))
    const submissions = sent.length
    const faulted = requests.filter((r) => r.fault !== undefined).length
    const events = readLog(log)
    const { handovers, repeated } = checkPolls(events)
    const byVictim = new Set(events.filter((e) => e.pid === victim.pid && e.ev === "status").map((e) => e.taskId)).size
    // What the kill found, task by task: which runners were about to submit it
    // (the log), what reached the service (the emulator's record).
    const tasks = ends.map((end) => {
      const prompt = `a video number ${end.key.replace(/^fleet-/, "")}`
      const answered = events.filter((e) => e.ev === "submit" && e.prompt === prompt)
      return {
        ...end,
        submitters: new Set(events.filter((e) => e.ev === "submitting" && e.prompt === prompt).map((e) => e.pid)),
        received: sent.filter((r) => JSON.stringify(r.body).includes(JSON.stringify(prompt))).length,
        polled: answered.some((a) => events.some((e) => e.ev === "status" && e.taskId === a.taskId))
      }
    })
    const unknown = tasks.filter((task) => task.exit === "Failure")
    const byVictimUnknown = unknown.filter((task) => task.submitters.has(victim.pid)).length
    console.log(
      `postgres fleet: ${ends.filter((e) => e.exit === "Success").length}/200 ended with a video, ${unknown.length} in an unknown ` +
        `submission outcome (${byVictimUnknown} begun by the killed runner), ${submissions} submissions, ${faulted} status calls faulted, ` +
        `${byVictim} tasks polled by the killed runner, ${handovers} handovers, ${repeated} polls repeated`
    )
    expect(ends).toHaveLength(200)
    // Each task reached the service at most once, and those that ended with a video exactly once.
    for (const task of tasks) expect(task.received, task.key).toBeLessThanOrEqual(1)
    expect(tasks.filter((task) => task.exit === "Success" && task.received !== 1)).toEqual([])
    // A task without its video ended in SubmissionOutcomeUnknownError: its
    // intent was stored and its answer was not, and nobody sent it again. That
    // is the killed runner's submissions in flight, and (docs/fleet.md,
    // "Submissions") a submission activity run again in one run: at load 44,
    // with shards lost and retaken, most were begun by live runners. Its task
    // id was never stored, so it was never polled.
    for (const task of unknown) {
      expect(task.error, task.key).toBe("SubmissionOutcomeUnknownError")
      expect(task.polled, task.key).toBe(false)
    }
    // Every task id the service gave was logged once.
    const taskIds = events.filter((e) => e.ev === "submit").map((e) => e.taskId)
    expect(new Set(taskIds).size).toBe(taskIds.length)
    expect(faulted).toBeGreaterThan(0)
    expect(byVictim).toBeGreaterThan(0)
  }, 480_000)
})

describe("an agent run on a fleet", () => {
  /** The workflow the runners register; a client needs only its name and schemas. */
  const agent = AgentWorkflow.make({ name: "FleetTestAgent", toolkit: Toolkit.make() })

  it("waits for an approval across a killed runner and runs the tool once", async () => {
    const url = postgres!.database("agent")
    const runtime = ManagedRuntime.make(
      Layer.merge(Emulator.layer(), Layer.unwrap(Effect.map(Cluster.parseDatabase(url), (database) => Cluster.layerClient({ database }))))
    )
    try {
      const emulator = await runtime.runPromise(Emulator.Emulator)
      const log = Path.join(tempDir("agent-fleet"), "log.jsonl")
      const env = { DATABASE: url, BASE_URL: emulator.url, API_KEY: emulator.apiKey, LOG: log }
      const runners = [0, 1].map((i) => startRunner({ ...env, PORT: String(portBase(5 + i)) }))
      onTestFinished(stopAll)
      await Promise.all(runners.map((runner) => runner.waitFor(/^ready$/m, "stdout")))
      await settled(url, 2)

      const key = "agent-approval-1"
      await runtime.runPromise(agent.start(key, "gpt-4o-mini", [{ role: "user", content: `Use delete_file({"path": "/tmp/a.txt"})` }]))
      const paused = await Promise.any(runners.map((runner) => runner.waitFor(/^approval \S+/m, "stdout").then(() => runner)))
      const token = paused.stdout().match(/approval (\S+)/)![1]!
      // Paused: the run has stored that it waits (its request for approval with it).
      await runtime.runPromise(
        agent.result(key).pipe(Effect.repeat({ until: (r) => r?._tag === "Suspended", schedule: Schedule.spaced("200 millis") }))
      )
      await paused.kill()
      const survivor = runners.find((runner) => runner !== paused)!
      const callsBeforeKill = (await runtime.runPromise(emulator.requests)).filter((r) => r.path.endsWith("/chat/completions")).length

      const approvalId = readLog(log).find((e) => e.ev === "approval")!.pending![0]!
      await runtime.runPromise(agent.decide(token, { [approvalId]: "approve" }))
      const result = await runtime.runPromise(
        agent.result(key).pipe(
          Effect.repeat({ until: (r) => r?._tag === "Complete", schedule: Schedule.spaced("500 millis") }),
          Effect.andThen(agent.result(key))
        )
      )
      await survivor.kill()
      const exit = result?._tag === "Complete" ? result.exit : undefined
      const outcome = exit?._tag === "Success" ? exit.value : undefined
      expect(outcome?.status).toBe("completed")
      expect(outcome?.transcript.some((m) => m.role === "tool" && JSON.stringify(m.content).includes("/tmp/a.txt"))).toBe(true)

      const events = readLog(log)
      const completions = (await runtime.runPromise(emulator.requests)).filter((r) => r.path.endsWith("/chat/completions"))
      console.log(
        `agent approval: paused on runner ${paused.pid} (killed), tool run ${events.filter((e) => e.ev === "tool").length}× on ` +
          `${survivor.pid}, ${completions.length} model calls`
      )
      expect(events.filter((e) => e.ev === "approval").map((e) => e.pid)).toEqual([paused.pid])
      expect(events.filter((e) => e.ev === "tool").map((e) => e.pid)).toEqual([survivor.pid])
      // The call before the pause, stored, is never made again: every call
      // after the kill carries the tool's result. (A call in flight may be made
      // again, as any activity: at load one was, 3 calls in all.)
      expect(callsBeforeKill).toBeGreaterThanOrEqual(1)
      expect(completions.length).toBeGreaterThan(callsBeforeKill)
      for (const call of completions.slice(callsBeforeKill)) expect(JSON.stringify(call.body)).toContain(`"role":"tool"`)
    } finally {
      await runtime.dispose()
    }
  }, 180_000)
})
