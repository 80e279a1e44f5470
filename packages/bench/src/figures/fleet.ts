/**
 * The fleet (issue 29, case 4): `switchboard worker` processes on a private
 * Postgres against a stub service in this process, a fleet of 3 beside one
 * worker on the same tasks. Start latency and submissions per second (one
 * client starting the tasks one after the other through
 * `VideoWorkflow.start`), polls per second and each task's poll interval
 * (`--poll-interval 1s`, tasks that never end), then, for the fleet, the
 * time until every task is polled again after a worker is SIGKILLed, and
 * the polls per second and longest gap when a worker joins.
 *
 * The figure starts and stops its own Postgres (Debian's `postgresql`:
 * `initdb` as the `postgres` user into a temporary directory, its own port
 * and socket directory on 127.0.0.1). Without it: "not measured".
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { pathToFileURL } from "node:url"
import type { Context, Figure, FigureResult } from "../lib/figure.js"
import { rootDir } from "../lib/machine.js"
import { median, num } from "../lib/stats.js"

const id = "fleet"
const title = "Video workflows: one worker and a fleet of 3 on Postgres"

const bin = path.join(rootDir, "packages", "cli", "bin", "switchboard.js")
/** Outside the ephemeral range (32768–60999), as the runners need. */
const pgPort = Number(process.env["FLEET_PG_PORT"] ?? 25470)
const firstWorkerPort = Number(process.env["FLEET_WORKER_PORT"] ?? 24180)

const cliClients = 5

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const pgBin = () => {
  const versions = fs.existsSync("/usr/lib/postgresql") ? fs.readdirSync("/usr/lib/postgresql") : []
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0]
  return newest === undefined ? undefined : path.join("/usr/lib/postgresql", newest, "bin")
}

/** CPU seconds (user + system) of a process so far, from /proc (Linux); 0 once it is gone. */
const cpuSeconds = (pid: number | undefined): number => {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
    // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond
  } catch {
    return 0
  }
}
const ticksPerSecond = 100

/** The processes whose parent is `pid` (Postgres' backends under its postmaster). */
const childrenOf = (pid: number): Array<number> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number).filter((child) => {
    try {
      return fs.readFileSync(`/proc/${child}/stat`, "utf8").replace(/^.*\) /, "").split(" ")[1] === String(pid)
    } catch {
      return false
    }
  })

interface Postgres {
  /** Postgres' CPU seconds so far: the postmaster and its processes. */
  readonly cpu: () => number
  readonly database: (name: string) => string
  readonly psql: (name: string, query: string) => string
  readonly stop: () => void
}

const startPostgres = (binDir: string): Postgres => {
  const root = process.getuid?.() === 0
  const run = (command: string, args: ReadonlyArray<string>) =>
    execFileSync(root ? "runuser" : path.join(binDir, command), root ? ["-u", "postgres", "--", path.join(binDir, command), ...args] : args, {
      stdio: "pipe"
    }).toString()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-bench-pg-"))
  fs.chmodSync(dir, 0o777)
  const data = path.join(dir, "data")
  run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"])
  run("pg_ctl", ["-D", data, "-o", `-p ${pgPort} -k ${dir} -h 127.0.0.1 -c fsync=off -c max_connections=200`, "-w", "-l", path.join(dir, "log"), "start"])
  const postmaster = Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0])
  return {
    cpu: () => cpuSeconds(postmaster) + childrenOf(postmaster).reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    database: (name) => {
      run("createdb", ["-h", dir, "-p", String(pgPort), name])
      return `postgres://postgres@127.0.0.1:${pgPort}/${name}`
    },
    psql: (name, query) => run("psql", ["-h", dir, "-p", String(pgPort), "-d", name, "-tAc", query]).trim(),
    stop: () => {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}

/** The stub service: every submission makes a task that stays "processing"; each call's time is kept. */
const startService = async () => {
  const submissions: Array<number> = []
  /** Prompt → when its submission arrived. */
  const submitted = new Map<string, number>()
  const polls = new Map<string, Array<number>>()
  let next = 0
  const server = http.createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" })
      if (request.url === "/v1/chat/task/status") {
        const { task_id } = JSON.parse(body) as { task_id: string }
        polls.get(task_id)?.push(performance.now())
        return response.end(JSON.stringify({ task_id, status: "processing", progress: 50 }))
      }
      const taskId = `task_${++next}`
      submissions.push(performance.now())
      const prompt = (JSON.parse(body) as { messages?: Array<{ content?: unknown }> }).messages?.at(-1)?.content
      if (typeof prompt === "string") submitted.set(prompt, performance.now())
      polls.set(taskId, [])
      response.end(JSON.stringify({ id: taskId, choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "stop" }] }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return { port, submissions, submitted, polls, close: () => server.close() }
}

interface Scenario {
  readonly label: string
  readonly workers: number
  /** Kill a worker, then start another, and measure both. */
  readonly faults: boolean
}

interface Measured {
  readonly label: string
  readonly startMs: ReadonlyArray<number>
  readonly submissionsPerSecond: number
  readonly pollsPerSecond: number
  readonly pollIntervalMs: number
  /** Over the steady window: the workers' CPU per status call, and Postgres' (all its processes). */
  readonly workerCpuPerPollMs?: number
  readonly postgresCpuPerPollMs?: number
  /** `switchboard video --database` processes started together: from spawn to their submission at the service. */
  readonly cliSubmitMs?: ReadonlyArray<number>
  /** One `switchboard video --database` alone: from spawn to its submission. */
  readonly cliAloneMs?: number
  /** `Cluster.layerClient` built in this process (connected, tables checked). */
  readonly clientBuildMs?: number
  readonly killRecoveryMs?: number
  readonly killMoved?: number
  readonly joinPollsPerSecond?: number
  readonly joinLongestGapMs?: number
  readonly error?: string
}

/** The status calls in [from, to). */
const callsIn = (polls: Map<string, Array<number>>, from: number, to: number) =>
  [...polls.values()].reduce((sum, times) => sum + times.filter((t) => t >= from && t < to).length, 0)

const run = async (context: Context, pg: Postgres, scenario: Scenario, tasks: number): Promise<Measured> => {
  const dbName = `bench_${scenario.label.replace(/\W+/g, "_")}_${Date.now()}`
  const url = pg.database(dbName)
  const service = await startService()
  const env = {
    ...process.env,
    NO_COLOR: "1",
    SWITCHBOARD_BASE_URL: `http://127.0.0.1:${service.port}`,
    SWITCHBOARD_API_KEY: "sk-bench"
  }
  const workers: Array<ChildProcess> = []
  const spawnWorker = (i: number) => {
    const child = spawn(process.execPath, [bin, "worker", "--database", url, "--port", String(firstWorkerPort + i), "--poll-interval", "1s"], {
      env,
      stdio: ["ignore", "ignore", "pipe"]
    })
    let err = ""
    child.stderr?.on("data", (chunk) => (err = (err + String(chunk)).slice(-2000)))
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL") context.log(`  worker ${i} exited (${code ?? signal}): ${err.trim().split("\n").slice(-3).join(" / ")}`)
    })
    workers.push(child)
    return child
  }
  const until = async (done: () => boolean, what: string, limitMs = 180_000) => {
    const start = performance.now()
    while (!done()) {
      if (performance.now() - start > limitMs) throw new Error(`gave up waiting for ${what}`)
      await sleep(200)
    }
  }
  const settled = (runners: number) => () =>
    pg.psql(dbName, "SELECT count(DISTINCT pid) || '/' || count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") ===
      `${runners}/300`
  // The workflow package as the CLI's client uses it, loaded from its build
  // (the bench does not depend on it).
  const workflowUrl = pathToFileURL(path.join(rootDir, "packages", "workflow", "dist", "index.js")).href
  const { Cluster, VideoWorkflow } = await import(workflowUrl)
  const ManagedRuntime = await import(pathToFileURL(path.join(rootDir, "packages", "workflow", "node_modules", "effect", "dist", "ManagedRuntime.js")).href)
  const Effect = await import(pathToFileURL(path.join(rootDir, "packages", "workflow", "node_modules", "effect", "dist", "Effect.js")).href)
  let client: { runPromise: (e: unknown) => Promise<unknown>; dispose: () => Promise<void> } | undefined
  try {
    for (let i = 0; i < scenario.workers; i++) spawnWorker(i)
    await until(settled(scenario.workers), `${scenario.workers} runners holding the 300 shards`)
    client = ManagedRuntime.make(Cluster.layerClient({ database: await Effect.runPromise(Cluster.parseDatabase(url)) }))
    // The client's engine built (connected) before the first timed start.
    const buildFrom = performance.now()
    await client!.runPromise(Effect.void)
    const clientBuildMs = performance.now() - buildFrom
    const startMs: Array<number> = []
    const first = performance.now()
    for (let i = 0; i < tasks; i++) {
      const t0 = performance.now()
      await client!.runPromise(VideoWorkflow.start({ model: "video-1", prompt: `bench ${i}` }, { key: `bench-${i}` }))
      startMs.push(performance.now() - t0)
    }
    await until(() => service.submissions.length === tasks, `${tasks} submissions`)
    const submissionsPerSecond = tasks / ((service.submissions.at(-1)! - first) / 1000)
    await until(() => [...service.polls.values()].every((times) => times.length >= 3), "every task polled 3 times")
    // The steady state: 15 s of polls.
    const workersCpu = () => workers.reduce((sum, worker) => sum + cpuSeconds(worker.pid), 0)
    const cpuFrom = { workers: workersCpu(), postgres: pg.cpu() }
    const steadyFrom = performance.now()
    await sleep(15_000)
    const steadyTo = performance.now()
    const cpuTo = { workers: workersCpu(), postgres: pg.cpu() }
    const steadyPolls = callsIn(service.polls, steadyFrom, steadyTo)
    const workerCpuPerPollMs = ((cpuTo.workers - cpuFrom.workers) * 1000) / steadyPolls
    const postgresCpuPerPollMs = ((cpuTo.postgres - cpuFrom.postgres) * 1000) / steadyPolls
    const pollsPerSecond = steadyPolls / ((steadyTo - steadyFrom) / 1000)
    const intervals = [...service.polls.values()].flatMap((times) => {
      const inWindow = times.filter((t) => t >= steadyFrom && t < steadyTo)
      return inWindow.slice(1).map((t, i) => t - inWindow[i]!)
    })
    // CLI clients, as a user starts tasks from a shell: 5 at once, each from
    // its spawn to its submission at the service, then stopped (the task
    // stays with the workers).
    const cli = async (count: number, tag: string) => {
      const started = performance.now()
      const prompts = Array.from({ length: count }, (_, i) => `cli ${tag} ${i}`)
      const clis = prompts.map((prompt, i) =>
        spawn(process.execPath, [bin, "video", prompt, "--model", "video-1", "--database", url, "--key", `cli-${tag}-${i}`], {
          env,
          stdio: "ignore"
        }))
      try {
        await until(() => prompts.every((p) => service.submitted.has(p)), "the CLI clients' submissions")
      } finally {
        for (const child of clis) child.kill("SIGKILL")
      }
      return prompts.map((p) => service.submitted.get(p)! - started)
    }
    const cliAloneMs = (await cli(1, "alone"))[0]!
    const cliSubmitMs = await cli(cliClients, "together")
    const base = { label: scenario.label, startMs, submissionsPerSecond, pollsPerSecond, pollIntervalMs: median(intervals), workerCpuPerPollMs, postgresCpuPerPollMs, clientBuildMs, cliAloneMs, cliSubmitMs }
    if (!scenario.faults) return base
    // A worker SIGKILLed: how long until every task is polled again.
    const killedAt = performance.now()
    workers[0]!.kill("SIGKILL")
    await until(() => [...service.polls.values()].every((times) => times.at(-1)! > killedAt), "every task polled after the kill")
    const firstAfter = [...service.polls.values()].map((times) => times.find((t) => t > killedAt)! - killedAt)
    const killRecoveryMs = Math.max(...firstAfter)
    const killMoved = [...service.polls.values()].filter((times) => {
      const after = times.findIndex((t) => t > killedAt)
      return times[after]! - times[after - 1]! > 3000
    }).length
    await until(settled(scenario.workers - 1), `${scenario.workers - 1} runners holding the 300 shards`)
    await sleep(5_000)
    // A worker joins: polls per second over the next 30 s, and the longest time a task went unpolled then.
    const joinedAt = performance.now()
    spawnWorker(scenario.workers)
    await sleep(30_000)
    const joinEnd = performance.now()
    const joinPollsPerSecond = callsIn(service.polls, joinedAt, joinEnd) / ((joinEnd - joinedAt) / 1000)
    // Per task: its last poll at or before the join, its polls until the end of the window, and the window's end.
    const joinLongestGapMs = Math.max(...[...service.polls.values()].map((times) => {
      const before = times.filter((t) => t <= joinedAt).at(-1) ?? joinedAt
      const marks = [before, ...times.filter((t) => t > joinedAt && t < joinEnd), joinEnd]
      return Math.max(...marks.slice(1).map((t, i) => t - marks[i]!))
    }))
    return { ...base, killRecoveryMs, killMoved, joinPollsPerSecond, joinLongestGapMs }
  } catch (error) {
    return { label: scenario.label, startMs: [], submissionsPerSecond: Number.NaN, pollsPerSecond: Number.NaN, pollIntervalMs: Number.NaN, error: String(error) }
  } finally {
    await client?.dispose().catch(() => undefined)
    for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL")
    service.close()
  }
}

const seconds = (ms: number | undefined) => (ms === undefined || !Number.isFinite(ms) ? "–" : `${num(ms / 1000)} s`)

export const figure: Figure = {
  id,
  title,
  run: async (context: Context): Promise<FigureResult> => {
    const binDir = pgBin()
    const method = "`switchboard worker --poll-interval 1s` processes on a private Postgres (fsync off), a stub service in the bench " +
      "process whose tasks never end. One client (`Cluster.layerClient`, connected first) starts the tasks one after the other " +
      "with `VideoWorkflow.start`; start latency is each call's wall time, submissions per second the tasks over the time from the " +
      "first start to the last submission reaching the service. Polls per second and the median interval between one task's polls " +
      `are counted over 15 s once every task was polled 3 times, with the CPU (user + system, from /proc) the workers and Postgres used then, per poll. Then one \`switchboard video --database\` process alone, and ${cliClients} ` +
      "spawned at once: the time from the spawn to each one's submission at the service (\"client built\": the bench's own " +
      "`Cluster.layerClient`, from nothing to connected). Fleet only: worker 0 SIGKILLed, then the time until every task was " +
      "polled again (and how many went more than 3 s without a poll); then, once the 2 survivors hold the shards, a new worker " +
      "started, and over the next 30 s the polls per second and the longest time any task went without a poll."
    if (binDir === undefined || !fs.existsSync(path.join(binDir, "initdb"))) {
      return { id, title, method, notMeasured: "no Postgres (Debian's postgresql) under /usr/lib/postgresql", tables: [], verdicts: [], notes: [], serverCores: undefined }
    }
    if (!fs.existsSync(path.join(rootDir, "packages", "workflow", "dist", "index.js"))) {
      return { id, title, method, notMeasured: "packages/workflow not built (pnpm build)", tables: [], verdicts: [], notes: [], serverCores: undefined }
    }
    const tasks = Number(process.env["FLEET_TASKS"] ?? (context.settings.quick ? 20 : 60))
    const pg = startPostgres(binDir)
    const results: Array<Measured> = []
    try {
      // FLEET_ONLY=one runs the single worker alone (an A/B of a change).
      const scenarios = [{ label: "one worker", workers: 1, faults: false }, { label: "fleet of 3", workers: 3, faults: true }]
      for (const scenario of process.env["FLEET_ONLY"] === "one" ? scenarios.slice(0, 1) : scenarios) {
        context.log(`  ${scenario.label}: ${tasks} tasks`)
        const measured = await run(context, pg, scenario, tasks)
        context.log(`  ${JSON.stringify({ ...measured, startMs: undefined, startMedianMs: median(measured.startMs), startMaxMs: Math.max(...measured.startMs) })}`)
        results.push(measured)
      }
    } finally {
      pg.stop()
    }
    const rows = results.map((m) =>
      m.error !== undefined ?
        [m.label, `failed: ${m.error}`, "", "", "", "", "", "", "", "", "", "", ""] :
        [
          m.label,
          `${num(median(m.startMs))} ms`,
          `${num(Math.max(...m.startMs))} ms`,
          num(m.submissionsPerSecond),
          num(m.pollsPerSecond),
          seconds(m.pollIntervalMs),
          `${num(m.workerCpuPerPollMs ?? Number.NaN)} ms / ${num(m.postgresCpuPerPollMs ?? Number.NaN)} ms`,
          `${num(m.clientBuildMs ?? Number.NaN)} ms`,
          seconds(m.cliAloneMs),
          m.cliSubmitMs === undefined ? "–" : `${seconds(median(m.cliSubmitMs))} (max ${seconds(Math.max(...m.cliSubmitMs))})`,
          m.killRecoveryMs === undefined ? "–" : `${seconds(m.killRecoveryMs)} (${m.killMoved} tasks moved)`,
          m.joinPollsPerSecond === undefined ? "–" : num(m.joinPollsPerSecond),
          seconds(m.joinLongestGapMs)
        ]
    )
    return {
      id,
      title,
      method,
      tables: [{
        caption: `${tasks} tasks, \`--poll-interval 1s\``,
        table: {
          header: [
            "runners",
            "start (median)",
            "start (max)",
            "submissions/s",
            "polls/s",
            "poll interval (median)",
            "CPU per poll: workers / Postgres",
            "client built",
            "CLI: spawn to submission (alone)",
            `CLI: spawn to submission (${cliClients} at once)`,
            "kill: every task polled again after",
            "join: polls/s (30 s)",
            "join: longest gap"
          ],
          numeric: [1, 2, 3, 4, 5, 6, 7, 8, 11, 12],
          rows
        }
      }],
      verdicts: [],
      notes: [],
      serverCores: undefined
    }
  }
}
