#!/usr/bin/env node
/**
 * What failover costs, measured (issue 29, case 2): a fleet of 3
 * `switchboard worker` processes on a private Postgres, `--poll-interval 1s`,
 * TASKS video tasks that never end (the service answers "processing" for
 * ever), one worker SIGKILLed once every task has been polled 3 times. For
 * each task, the gap is the time from its last poll before the kill to its
 * first poll after; the killed worker's tasks are the ones with a gap over
 * 3 s. Prints one JSON line: the longest gap, the median of the moved tasks'
 * gaps and how many moved. A figure for docs/fleet.md, not a test: nothing
 * is asserted.
 *
 *   pnpm exec tsc -b packages/cli/tsconfig.build.json
 *   pnpm exec node packages/cli/test/failover.mjs [label] [worker flags…]
 *   pnpm exec node packages/cli/test/failover.mjs effect-defaults \
 *     --health-check-interval 1m --shard-lock-expiration 35s --shard-lock-refresh 10s
 *
 * Environment: TASKS (default 30), PG_PORT (default 25450), WORKER_PORT
 * (first of 3, default 24160), KILL (which worker, 0–2, default 0).
 */
import { Cluster, VideoWorkflow } from "@switchboard/workflow"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import process from "node:process"
import { setTimeout } from "node:timers"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const bin = Path.resolve(here, "../bin/switchboard.js")
const [label = "defaults", ...workerFlags] = process.argv.slice(2)
const tasks = Number(process.env.TASKS ?? 30)
const pgPort = Number(process.env.PG_PORT ?? 25450)
const firstPort = Number(process.env.WORKER_PORT ?? 24160)
const victim = Number(process.env.KILL ?? 0)

const pgBin = Path.join("/usr/lib/postgresql", Fs.readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a))[0], "bin")
const asPostgres = (command, args) =>
  execFileSync("runuser", ["-u", "postgres", "--", Path.join(pgBin, command), ...args], { stdio: "pipe" }).toString()
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-failover-"))
Fs.chmodSync(dir, 0o777)
asPostgres("initdb", ["-D", Path.join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync"])
asPostgres("pg_ctl", ["-D", Path.join(dir, "data"), "-o", `-p ${pgPort} -k ${dir} -h 127.0.0.1 -c fsync=off`, "-w", "-l", Path.join(dir, "log"), "start"])
asPostgres("createdb", ["-h", dir, "-p", String(pgPort), "fleet"])
const url = `postgres://postgres@127.0.0.1:${pgPort}/fleet`
const psql = (query) => asPostgres("psql", ["-h", dir, "-p", String(pgPort), "-d", "fleet", "-tAc", query]).trim()

/** Task id → the times of its status calls. */
const polls = new Map()
let submitted = 0
const service = Http.createServer((request, response) => {
  let body = ""
  request.on("data", (chunk) => (body += chunk))
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/json" })
    if (request.url === "/v1/chat/task/status") {
      const { task_id } = JSON.parse(body)
      polls.set(task_id, [...(polls.get(task_id) ?? []), Date.now()])
      return response.end(JSON.stringify({ task_id, status: "processing", progress: 50 }))
    }
    const id = `task_${++submitted}`
    polls.set(id, [])
    response.end(JSON.stringify({ id, choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "stop" }] }))
  })
})
await new Promise((resolve) => service.listen(0, "127.0.0.1", resolve))
const env = { ...process.env, NO_COLOR: "1", SWITCHBOARD_BASE_URL: `http://127.0.0.1:${service.address().port}`, SWITCHBOARD_API_KEY: "sk-x" }

const workers = [0, 1, 2].map((i) =>
  spawn(process.execPath, [bin, "worker", "--database", url, "--port", String(firstPort + i), "--poll-interval", "1s", ...workerFlags], {
    env,
    stdio: ["ignore", "pipe", "inherit"]
  })
)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const until = async (done, what, limit = 300_000) => {
  const start = Date.now()
  while (!done()) {
    if (Date.now() - start > limit) throw new Error(`gave up waiting for ${what}`)
    await sleep(200)
  }
}
const cleanup = () => {
  for (const worker of workers) if (worker.exitCode === null) worker.kill("SIGKILL")
  service.close()
  try {
    asPostgres("pg_ctl", ["-D", Path.join(dir, "data"), "-m", "immediate", "-w", "stop"])
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

try {
  // The fleet settled: 3 sessions hold the 300 shards' advisory locks.
  await until(() => psql("SELECT count(DISTINCT pid) || '/' || count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") === "3/300", "3 runners holding 300 shards")
  const client = ManagedRuntime.make(Cluster.layerClient({ database: await Effect.runPromise(Cluster.parseDatabase(url)) }))
  for (let i = 0; i < tasks; i++) {
    await client.runPromise(VideoWorkflow.start({ model: "video-1", prompt: `failover ${i}` }, { key: `failover-${label}-${i}` }))
  }
  await client.dispose()
  await until(() => polls.size === tasks && [...polls.values()].every((times) => times.length >= 3), "every task polled 3 times")
  const killedAt = Date.now()
  workers[victim].kill("SIGKILL")
  await until(() => [...polls.values()].every((times) => times.at(-1) > killedAt), "every task polled after the kill")
  const gaps = [...polls.values()].map((times) => {
    const after = times.findIndex((t) => t > killedAt)
    return (times[after] - times[after - 1]) / 1000
  }).sort((a, b) => a - b)
  const moved = gaps.filter((gap) => gap > 3)
  process.stdout.write(`${JSON.stringify({
    label,
    flags: workerFlags.join(" "),
    tasks,
    moved: moved.length,
    longestGap: gaps.at(-1),
    medianMovedGap: moved[Math.floor(moved.length / 2)] ?? null,
    otherTasksLongestGap: gaps.filter((gap) => gap <= 3).at(-1) ?? null,
    loadAverage: Os.loadavg().map((n) => Number(n.toFixed(1)))
  })}\n`)
} finally {
  cleanup()
}
process.exit(0)
