/**
 * The orchestrator's side of the processes: the server, and one child per
 * client run. Every child is tracked and stopped by its own handle (its PID)
 * on the way out, and killed if it outlives its time limit.
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import type { ClientResult, ClientSpec, ClientToParent, ParentToServer, ServerToParent } from "./ipc.js"

const serverPath = fileURLToPath(new URL("../server.js", import.meta.url))
/** The emulator as a bench server (`emulator.ts`), for figures that need the service's behaviour. */
export const emulatorPath = fileURLToPath(new URL("../emulator.js", import.meta.url))
const clientPath = fileURLToPath(new URL("../client.js", import.meta.url))

const live = new Set<ChildProcess>()

/** Stops every child still running (by its handle, i.e. its PID). */
export const stopAll = () => {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  live.clear()
}
process.on("exit", stopAll)

const track = (child: ChildProcess) => {
  live.add(child)
  child.on("exit", () => live.delete(child))
  return child
}

export interface Server {
  readonly port: number
  readonly pid: number
  /** The server process's `process.cpuUsage()`. */
  readonly cpu: () => Promise<NodeJS.CpuUsage>
  readonly stop: () => Promise<void>
}

/** Starts the loopback server, or another script that speaks its IPC (`emulatorPath`). */
export const startServer = (script = serverPath): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child = track(fork(script, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] }))
    let nextId = 0
    const waiting = new Map<number, (usage: NodeJS.CpuUsage) => void>()
    const ask = (message: ParentToServer) => child.send(message)
    child.on("message", (message: ServerToParent) => {
      if (message.type === "ready") {
        resolve({
          port: message.port,
          pid: child.pid!,
          cpu: () =>
            new Promise((done) => {
              const id = nextId++
              waiting.set(id, done)
              ask({ type: "cpu", id })
            }),
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done()
              const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
              child.once("exit", () => {
                clearTimeout(timer)
                done()
              })
              ask({ type: "stop" })
            })
        })
      } else if (message.type === "cpu") {
        waiting.get(message.id)?.(message.usage)
        waiting.delete(message.id)
      }
    })
    child.once("exit", (code) => reject(new Error(`server exited with ${code} before it was ready`)))
  })

export interface Run {
  readonly result: ClientResult
  /** The server's CPU time over the client's timed section, in cores (1 = one core busy). */
  readonly serverCores: number | undefined
}

/**
 * Runs one client in a fresh process and waits for its result, killing it past `spec.timeLimitMs` + 60 s.
 * `options.clientPath` runs another edition's `client.js` (the Effect 3 edition's, `effect3.ts`).
 */
export const runClient = (
  spec: ClientSpec,
  server: Server,
  options: { readonly execArgv?: ReadonlyArray<string>; readonly clientPath?: string } = {}
): Promise<Run> =>
  new Promise((resolve) => {
    const child = track(
      fork(options.clientPath ?? clientPath, [JSON.stringify(spec)], {
        stdio: ["ignore", "inherit", "inherit", "ipc"],
        execArgv: [...(options.execArgv ?? [])]
      })
    )
    let result: ClientResult | undefined
    let start: Promise<readonly [number, NodeJS.CpuUsage]> | undefined
    let serverCores: Promise<number> | undefined
    const sample = async () => [performance.now(), await server.cpu()] as const
    const timer = setTimeout(() => {
      result ??= { ok: false, error: `killed after ${spec.timeLimitMs + 60_000} ms` }
      child.kill("SIGKILL")
    }, spec.timeLimitMs + 60_000)
    child.on("message", (message: ClientToParent) => {
      if (message.type === "result") result = message.result
      else if (message.phase === "start") start = sample()
      else if (start !== undefined) {
        const from = start
        serverCores = Promise.all([from, sample()]).then(([[t0, c0], [t1, c1]]) =>
          (c1.user - c0.user + c1.system - c0.system) / 1000 / Math.max(1e-6, t1 - t0)
        )
      }
    })
    child.once("exit", async (code, signal) => {
      clearTimeout(timer)
      resolve({
        result: result ?? { ok: false, error: `client exited (${signal ?? code}) without a result` },
        serverCores: serverCores === undefined ? undefined : await serverCores
      })
    })
  })

export interface ScriptRun {
  /** Milliseconds from the spawn to the process's exit, as the parent saw them. */
  readonly wallMs: number
  readonly exitCode: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `node <args>` as a whole process (no IPC channel) and times it from
 * spawn to exit; killed past `timeLimitMs`.
 */
export const runScript = (
  args: ReadonlyArray<string>,
  options: { readonly timeLimitMs: number; readonly env?: NodeJS.ProcessEnv }
): Promise<ScriptRun> =>
  new Promise((resolve) => {
    const started = performance.now()
    const child = track(spawn(process.execPath, [...args], { stdio: ["ignore", "pipe", "pipe"], env: options.env ?? process.env }))
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (part: string) => (stdout += part))
    child.stderr!.setEncoding("utf8").on("data", (part: string) => (stderr += part))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeLimitMs)
    child.once("exit", () => {
      const wallMs = performance.now() - started
      clearTimeout(timer)
      child.once("close", () => resolve({ wallMs, exitCode: child.exitCode, stdout, stderr }))
    })
  })
