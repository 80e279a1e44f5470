#!/usr/bin/env node
/**
 * What a join costs, measured (issue 29, case 3): a fleet of BEFORE
 * `switchboard worker` processes on a private Postgres, `--poll-interval 1s`,
 * TASKS video tasks that never end (the service answers "processing" for
 * ever), and one more worker started once every task has been polled 3 times.
 * Each worker reaches the service under its own path (`/w<i>`), so every
 * status call names the worker that made it. Prints one JSON line:
 *
 * - `moved`: tasks polled by the new worker within the run; `movedGaps`:
 *   each one's time from its last poll by an old worker to its first by the
 *   new one (median and longest);
 * - `longestGap`: the longest time any task went without a poll after the join;
 * - `rate`: polls per second across the fleet in the WINDOW seconds before
 *   the join, and the lowest and each 5 s window's rate after it, as a share;
 * - `joinedAfter`: seconds from the new worker's start to its first poll.
 *
 * A figure for docs/fleet.md, not a test: nothing is asserted.
 *
 *   pnpm exec tsc -b packages/cli/tsconfig.build.json
 *   pnpm exec node packages/cli/test/join.mjs [label] [worker flags…]
 *
 * Environment: TASKS (default 30), BEFORE (default 2), PG_PORT (default
 * 25460), WORKER_PORT (first worker's, default 24170), AFTER (seconds
 * measured after the join, default 45).
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
const before = Number(process.env.BEFORE ?? 2)
const pgPort = Number(process.env.PG_PORT ?? 25460)
const firstPort = Number(process.env.WORKER_PORT ?? 24170)
const after = Number(process.env.AFTER ?? 45) * 1000
const window = 10_000

const pgBin = Path.join("/usr/lib/postgresql", Fs.readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a))[0], "bin")
const asPostgres = (command, args) =>
  execFileSync("runuser", ["-u", "postgres", "--", Path.join(pgBin, command), ...args], { stdio: "pipe" }).toString()
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-join-"))
Fs.chmodSync(dir, 0o777)
asPostgres("initdb", ["-D", Path.join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync"])
asPostgres("pg_ctl", ["-D", Path.join(dir, "data"), "-o", `-p ${pgPort} -k ${dir} -h 127.0.0.1 -c fsync=off`, "-w", "-l", Path.join(dir, "log"), "start"])
asPostgres("createdb", ["-h", dir, "-p", String(pgPort), "fleet"])
const url = `postgres://postgres@127.0.0.1:${pgPort}/fleet`
const psql = (query) => asPostgres("psql", ["-h", dir, "-p", String(pgPort), "-d", "fleet", "-tAc", query]).trim()

/** Task id → its status calls: when, and by which worker. */
const polls = new Map()
let submitted = 0
const service = Http.createServer((request, response) => {
  let body = ""
  request.on("data", (chunk) => (body += chunk))
  request.on("end", () => {
    const [, worker, ...rest] = (request.url ?? "").split("/")
    const path = `/${rest.join("/")}`
    response.writeHead(200, { "content-type": "application/json" })
    if (path === "/v1/chat/task/status") {
      const { task_id } = JSON.parse(body)
      polls.get(task_id)?.push({ at: Date.now(), worker })
      return response.end(JSON.stringify({ task_id, status: "processing", progress: 50 }))
    }
    const id = `task_${++submitted}`
    polls.set(id, [])
    response.end(JSON.stringify({ id, choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "stop" }] }))
  })
})
await new Promise((resolve) => service.listen(0, "127.0.0.1", resolve))
const base = `http://127.0.0.1:${service.address().port}`

const workers = []
const startWorker = (i) => {
  const worker = spawn(process.execPath, [bin, "worker", "--database", url, "--port", String(firstPort + i), "--poll-interval", "1s", ...workerFlags], {
    env: { ...process.env, NO_COLOR: "1", SWITCHBOARD_BASE_URL: `${base}/w${i}`, SWITCHBOARD_API_KEY: "sk-x" },
    stdio: ["ignore", "ignore", "inherit"]
  })
  workers.push(worker)
  return worker
}
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
const holders = () => psql("SELECT count(DISTINCT pid) || '/' || count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")

try {
  for (let i = 0; i < before; i++) startWorker(i)
  await until(() => holders() === `${before}/300`, `${before} runners holding 300 shards`)
  const client = ManagedRuntime.make(Cluster.layerClient({ database: await Effect.runPromise(Cluster.parseDatabase(url)) }))
  for (let i = 0; i < tasks; i++) {
    await client.runPromise(VideoWorkflow.start({ model: "video-1", prompt: `join ${i}` }, { key: `join-${label}-${i}` }))
  }
  await client.dispose()
  await until(() => polls.size === tasks && [...polls.values()].every((calls) => calls.length >= 3), "every task polled 3 times")
  // A steady rate to compare with: WINDOW seconds of polls before the join.
  await sleep(window)
  const joinedAt = Date.now()
  const newcomer = `w${before}`
  startWorker(before)
  await sleep(after)
  const all = [...polls.values()]
  const count = (from, to) => all.reduce((n, calls) => n + calls.filter((c) => c.at >= from && c.at < to).length, 0)
  const rateBefore = count(joinedAt - window, joinedAt) / (window / 1000)
  const windows = []
  for (let from = joinedAt; from + 5000 <= joinedAt + after; from += 5000) windows.push(count(from, from + 5000) / 5 / rateBefore)
  const movedGaps = []
  const gaps = []
  for (const calls of all) {
    const around = calls.filter((c) => c.at >= joinedAt - 3000)
    for (let i = 1; i < around.length; i++) gaps.push((around[i].at - around[i - 1].at) / 1000)
    const first = calls.findIndex((c) => c.worker === newcomer)
    if (first > 0) movedGaps.push((calls[first].at - calls[first - 1].at) / 1000)
  }
  movedGaps.sort((a, b) => a - b)
  gaps.sort((a, b) => a - b)
  const firstNew = Math.min(...all.flatMap((calls) => calls.filter((c) => c.worker === newcomer).map((c) => c.at)))
  process.stdout.write(`${JSON.stringify({
    label,
    flags: workerFlags.join(" "),
    tasks,
    before,
    moved: movedGaps.length,
    movedGapMedian: movedGaps[Math.floor(movedGaps.length / 2)] ?? null,
    movedGapLongest: movedGaps.at(-1) ?? null,
    longestGap: gaps.at(-1),
    rateBefore,
    rateLowest: Number(Math.min(...windows).toFixed(2)),
    rateWindows: windows.map((r) => Number(r.toFixed(2))),
    joinedAfter: Number.isFinite(firstNew) ? (firstNew - joinedAt) / 1000 : null,
    loadAverage: Os.loadavg().map((n) => Number(n.toFixed(1)))
  })}\n`)
} finally {
  cleanup()
}
process.exit(0)
