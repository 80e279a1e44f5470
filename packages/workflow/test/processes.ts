/**
 * Runner processes for the fleet tests: `fixtures/runner.mjs` over the built
 * package, started, waited on by what they print (never by a clock), and
 * killed by pid.
 */
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const packageDir = Path.resolve(here, "..")
const repoRoot = Path.resolve(packageDir, "../..")

/**
 * Holds a lock (a directory under node_modules) while `f` runs: the CLI's and
 * the workflow package's process tests both build packages/workflow, and two
 * `tsc -b` on one dist must not race. A lock older than 5 minutes is stale.
 */
const withBuildLock = <A>(repoRoot: string, f: () => A): A => {
  const lock = Path.join(repoRoot, "node_modules/.switchboard-build.lock")
  for (;;) {
    try {
      Fs.mkdirSync(lock)
      break
    } catch {
      const age = Date.now() - (Fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > 300_000) Fs.rmSync(lock, { recursive: true, force: true })
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200)
    }
  }
  try {
    return f()
  } finally {
    Fs.rmSync(lock, { recursive: true, force: true })
  }
}

/** `tsc -b` of the package and what it references (a no-op when dist is up to date). */
export const build = (): void => {
  const tsc = Path.join(repoRoot, "node_modules/typescript/bin/tsc")
  const result = withBuildLock(repoRoot, () => spawnSync(process.execPath, [tsc, "-b", Path.join(packageDir, "tsconfig.build.json")], {
    cwd: repoRoot,
    encoding: "utf8"
  }))
  if (result.status !== 0) throw new Error(`tsc -b packages/workflow failed:\n${result.stdout}${result.stderr}`)
}

export interface Runner {
  readonly pid: number
  readonly stdout: () => string
  /** Resolves once `pattern` appears on stdout; rejects if the process exits first. */
  readonly waitFor: (pattern: RegExp) => Promise<string>
  /** SIGKILL, and resolves once the process is gone. */
  readonly kill: () => Promise<void>
}

const live = new Map<number, Promise<void>>()

/** Kills (by pid) every runner still alive, e.g. after a failed test. */
export const stopAll = async (): Promise<void> => {
  for (const pid of live.keys()) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
  await Promise.allSettled(live.values())
}

export const startRunner = (env: Readonly<Record<string, string>>): Runner => {
  const child = spawn(process.execPath, [Path.join(here, "fixtures/runner.mjs")], {
    cwd: packageDir,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  const listeners = new Set<() => void>()
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk
    listeners.forEach((f) => f())
  })
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk
  })
  let exited = false
  const gone = new Promise<void>((resolve) =>
    child.on("close", () => {
      exited = true
      live.delete(child.pid!)
      listeners.forEach((f) => f())
      resolve()
    })
  )
  live.set(child.pid!, gone)
  return {
    pid: child.pid!,
    stdout: () => out,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(out)) {
            listeners.delete(check)
            resolve(out)
          } else if (exited) {
            listeners.delete(check)
            reject(new Error(`runner ${child.pid} exited before ${pattern}:\n${out}\n${err.slice(-4000)}`))
          }
        }
        listeners.add(check)
        check()
      }),
    kill: () => {
      child.kill("SIGKILL")
      return gone
    }
  }
}

export interface LogEvent {
  readonly pid: number
  readonly at: number
  readonly ev: "submit" | "status" | "status-end" | "approval" | "tool"
  readonly taskId: string
  readonly pending?: ReadonlyArray<string>
  readonly activity?: string
  readonly tag?: string
}

/** The runners' shared log of submissions and status calls. */
export const readLog = (file: string): ReadonlyArray<LogEvent> =>
  Fs.existsSync(file)
    ? Fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as LogEvent)
    : []
