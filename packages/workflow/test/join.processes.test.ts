/**
 * Issue 29, case 3, across real processes: a runner joins a fleet of two on
 * Postgres (`fixtures/runner.mjs` over the built package, this package's
 * defaults: `Cluster.failoverDefaults`). The old owners hand the shards the
 * newcomer is assigned over: each stops the shards' workflow entities, then
 * releases their locks, and the newcomer takes them and replays the
 * workflows. A video workflow's run never ends by itself while it polls, so
 * an old owner waits the whole `entityTerminationTimeout` for it before
 * releasing (15 s by effect/cluster's default: the pause the issue saw).
 *
 * - Every task that moves is handed over without waiting for its run to
 *   end: the runners wait up to 10 minutes (`entityTerminationTimeout`,
 *   longer than the test) for a shard's entities to end before releasing
 *   it, so the newcomer gets its shards only if each workflow lets its shard
 *   go by itself. Then each moved task is polled by the newcomer and never
 *   again by its old owner. Nothing is timed: how many polls the tasks that
 *   stayed made meanwhile is printed, never asserted.
 * - A submission in flight when its shard moves ends on its old owner: the
 *   service holds the submissions' answers until the newcomer has polled a
 *   task (a handover is over), then answers; each task was submitted once,
 *   and ended with its video, some followed by the newcomer. (The old
 *   owner waits for it up to `entityTerminationTimeout`: without the
 *   change, the first handover takes that long, and the held submissions
 *   outlast it.)
 */
import * as Processes from "@switchboard/test-support/Processes"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Ports from "@switchboard/test-support/Ports"
import { type Postgres, settled, startPostgres } from "./postgres.js"
import { build, explainAfter, type LogEvent, readLog, type Runner, startRunner } from "./processes.js"

/** Longer than the test: without the handover by the workflow itself, the newcomer never gets a shard. */
const NEVER = "10 minutes"

let postgres: Postgres | undefined
const dirs: Array<string> = []

beforeAll(() => {
  postgres = startPostgres(Ports.postgres.join())
  build()
}, 240_000)
afterAll(async () => {
  await Processes.stopAll()
  postgres?.stop()
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

/** Runner ports: outside the ephemeral range, apart from the other process tests' (test-support/Ports.ts). */
const port = (offset: number) => String(Ports.joinRunner(offset))

/**
 * A video service whose tasks never end, except those of a prompt with
 * "slow" in it: their submissions are answered only when `answerHeld` is
 * called, and they succeed at their first status call after that.
 */
const service = async () => {
  let made = 0
  const submissions: Array<string> = []
  const held: Array<() => void> = []
  const heldIds = new Set<string>()
  const answered = new Set<string>()
  const server = Http.createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      const json = (value: unknown) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify(value))
      }
      if (request.url?.endsWith("/v1/chat/task/status")) {
        const taskId = String(JSON.parse(body).task_id)
        return json(
          answered.has(taskId)
            ? { task_id: taskId, status: "succeed", progress: 100, video_url: `http://127.0.0.1/files/${taskId}.mp4` }
            : { task_id: taskId, status: "processing", progress: 50 }
        )
      }
      const id = `task_${++made}`
      submissions.push(id)
      const answer = () => json({ id, choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "stop" }] })
      if (!body.includes("slow")) return answer()
      heldIds.add(id)
      held.push(() => {
        answered.add(id)
        answer()
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`,
    submissions,
    heldIds,
    held: () => held.length,
    answerHeld: () => held.splice(0).forEach((answer) => answer()),
    close: () => {
      server.closeAllConnections()
      server.close()
    }
  }
}

/**
 * Resolves once `done` holds, asked every 100 ms (the wait's length is never
 * asserted); rejects when asking throws, rather than waiting on forever.
 */
const until = (done: () => boolean) =>
  new Promise<void>((resolve, reject) => {
    const check = () => {
      try {
        if (done()) resolve()
        else setTimeout(check, 100)
      } catch (error) {
        reject(error)
      }
    }
    check()
  })

const statusCalls = (log: string): ReadonlyArray<LogEvent> => readLog(log).filter((e) => e.ev === "status")

const fleet = async (name: string, pollMs: number) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-join-"))
  dirs.push(dir)
  const svc = await service()
  const log = Path.join(dir, "log.jsonl")
  const debug = Path.join(dir, "debug.jsonl")
  const env = { DATABASE: postgres!.database(name), BASE_URL: svc.url, API_KEY: "sk-test", LOG: log, DEBUG_LOG: debug, POLL_MS: String(pollMs) }
  const runner = (offset: number, more: Record<string, string> = {}): Runner => startRunner({ ...env, PORT: port(offset), ...more })
  return { dir, svc, log, debug, env, runner }
}

describe("a runner joins a fleet of two on Postgres", { timeout: 480_000 }, () => {
  it("every task that moves is handed over without waiting for its run to end: polled by the newcomer, never again by its old owner", async () => {
    const { debug, env, log, runner, svc } = await fleet("join_run", 500)
    try {
      const [a, b] = [runner(0, { TERMINATION_TIMEOUT: NEVER }), runner(1, { TERMINATION_TIMEOUT: NEVER })]
      await Promise.all([a.waitFor(/^ready$/m, "stdout"), b.waitFor(/^ready$/m, "stdout")])
      await settled(env.DATABASE, 2)
      const tasks = 20
      const client = runner(2, { CLIENT: "1", START: "1", COUNT: String(tasks), PREFIX: "join" })
      await client.waitFor(/^started in/m, "stdout")
      await until(() => {
        const calls = statusCalls(log)
        return new Set(calls.map((e) => e.taskId)).size === tasks &&
          [...new Set(calls.map((e) => e.taskId))].every((id) => calls.filter((e) => e.taskId === id).length >= 3)
      })
      const c = runner(3, { TERMINATION_TIMEOUT: NEVER })
      await c.waitFor(/^ready$/m, "stdout")
      const upAt = Date.now()
      /** effect's logs (DEBUG_LOG) that mention `text`: a stuck run's handover, the shard assignments. */
      const effectLogs = (text: string | undefined) =>
        text === undefined ? [] : readLog<{ pid: number; at: number; message?: string }>(debug).flatMap((x) =>
          x.message?.includes(text) ? [{ pid: x.pid, at: x.at, message: x.message }] : [])
      const where = (from = upAt) => {
        const since = statusCalls(log).filter((e) => e.at > upAt)
        const last = new Map(statusCalls(log).map((e) => [e.taskId, e]))
        const quiet = [...last.values()].filter((e) => e.at <= from)
        return `since the newcomer was up: ${since.length} status calls, ${since.filter((e) => e.pid === c.pid).length} by it; ` +
          `runners a=${a.pid} b=${b.pid} c=${c.pid}; tasks not polled since: ` +
          `${quiet.map((e) => `${e.taskId} (last by ${e.pid}, ${Date.now() - e.at} ms ago; its last events: ${JSON.stringify(readLog(log).filter((x) => x.taskId === e.taskId).slice(-4))}; effect's logs of its run: ${JSON.stringify(effectLogs(e.execution))})`).join(", ") || "none"}; ` +
          `runners' last shard assignments: ${JSON.stringify(effectLogs("New shard assignments").map((x) => ({ pid: x.pid, at: x.at, shards: x.message.split(",").length })).slice(-6))}; ` +
          `runners' stderr: ${[a, b, c].map((r) => r.stderr().slice(-400)).join(" | ")}`
      }
      // The newcomer polls a task once an old owner let go of its shard
      // (waiting for its entities would take NEVER). How long the whole
      // handover takes depends on the machine's load: the verdict is drawn
      // from the polls that happened, not from the fleet reaching its shares.
      await explainAfter(
        200_000,
        until(() => statusCalls(log).some((e) => e.pid === c.pid)),
        () => `the newcomer polled no task: ${where()}`
      )
      const settledAt = Date.now()
      await explainAfter(
        200_000,
        until(() => new Set(statusCalls(log).filter((e) => e.at > settledAt).map((e) => e.taskId)).size === tasks),
        () => `not every task was polled since the newcomer's first poll: ${where(settledAt)}`
      )
      const calls = statusCalls(log)
      const owner = new Map(calls.filter((e) => e.at > settledAt).map((e) => [e.taskId, e.pid]))
      const moved = [...owner].filter(([, pid]) => pid === c.pid).map(([id]) => id)
      const stayed = [...owner].filter(([, pid]) => pid !== c.pid).map(([id]) => id)
      // Never vacuous: the newcomer took tasks, and some stayed.
      expect(moved.length).toBeGreaterThan(0)
      expect(stayed.length).toBeGreaterThan(0)
      // A moved task: once the newcomer polled it, nobody else did.
      for (const id of moved) {
        const first = calls.find((e) => e.taskId === id && e.pid === c.pid)!
        expect(calls.filter((e) => e.taskId === id && e.at >= first.at && e.pid !== c.pid), id).toEqual([])
      }
      // For the record: how many polls the median task that stayed made
      // between the newcomer being up and its first poll of each moved task.
      const waited = moved.map((id) => {
        const first = calls.find((e) => e.taskId === id && e.pid === c.pid)!.at
        const counts = stayed.map((s) => calls.filter((e) => e.taskId === s && e.at > upAt && e.at < first).length).sort((x, y) => x - y)
        return counts[Math.floor(counts.length / 2)]!
      })
      console.log(`join: ${moved.length} of ${tasks} tasks moved; polls of the tasks that stayed before each was taken: ${waited.join(", ")}`)
    } finally {
      svc.close()
      await Processes.stopAll()
    }
  })

  it("a submission in flight when its shard moves finishes on its runner: submitted once, its task followed to the end by the newcomer", async () => {
    const { env, log, runner, svc } = await fleet("join_held", 500)
    try {
      const [a, b] = [runner(0), runner(1)]
      await Promise.all([a.waitFor(/^ready$/m, "stdout"), b.waitFor(/^ready$/m, "stdout")])
      await settled(env.DATABASE, 2)
      const regular = 30
      const held = 15
      const starter = runner(2, { CLIENT: "1", START: "1", COUNT: String(regular), PREFIX: "regular" })
      await starter.waitFor(/^started in/m, "stdout")
      // The held tasks' client follows them to their end.
      const follower = runner(4, { CLIENT: "1", START: "1", FOLLOW: "1", SLOW: "1", COUNT: String(held), PREFIX: "held" })
      await until(() => svc.held() === held && new Set(statusCalls(log).map((e) => e.taskId)).size === regular)
      const c = runner(3)
      await c.waitFor(/^ready$/m, "stdout")
      // The newcomer has polled a task: a handover is over, the old owners are
      // handing the others over. The held submissions are answered now, while
      // their shards are being let go. (Not once every other handover is
      // over: a shard may hold both a held submission and a regular task.)
      const upAt = Date.now()
      await until(() => statusCalls(log).some((e) => e.pid === c.pid))
      console.log(`join, held: the newcomer polled ${Date.now() - upAt} ms after it was up`)
      // Still in flight: no held submission has been answered.
      expect(svc.held()).toBe(held)
      expect(readLog(log).filter((e) => e.ev === "submit")).toHaveLength(regular)
      svc.answerHeld()
      const complete = await follower.waitFor(/^complete .*\n/m, "stdout")
      const ends = JSON.parse(/^complete (.*)$/m.exec(complete)![1]!) as ReadonlyArray<{ key: string; exit: string; cause?: string }>
      expect(ends.filter((end) => end.exit !== "Success")).toEqual([])
      expect(ends).toHaveLength(held)
      // Each task submitted once: the submissions answered after the handover
      // were not sent again by the newcomer.
      expect(svc.submissions).toHaveLength(regular + held)
      const submits = readLog(log).filter((e) => e.ev === "submit")
      expect(new Set(submits.map((e) => e.taskId)).size).toBe(regular + held)
      // Never vacuous: held tasks whose shard moved, their submission answered
      // to an old owner and their polls made by the newcomer.
      const followedByNewcomer = [...svc.heldIds].filter((id) => statusCalls(log).some((e) => e.taskId === id && e.pid === c.pid))
      console.log(`join, held: ${followedByNewcomer.length} of ${held} held submissions moved to the newcomer`)
      expect(followedByNewcomer.length).toBeGreaterThan(0)
      for (const id of followedByNewcomer) expect(submits.find((e) => e.taskId === id)!.pid).not.toBe(c.pid)
    } finally {
      svc.close()
      await Processes.stopAll()
    }
  })
})
