/**
 * What the process tests of the CLI and of the workflow package share:
 * building a package's dist under a lock (two `tsc -b` on one dist must not
 * race), and child processes that a test waits on by what they print (never
 * by a clock), killed by pid, none left behind.
 */
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository's root. */
export const repoRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")

/**
 * Holds a lock (a directory under node_modules) while `f` runs. A lock older
 * than 5 minutes is stale: its holder died.
 */
const withBuildLock = <A>(f: () => A): A => {
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

/**
 * `tsc -b` of a `tsconfig.build.json` and what it references (incremental: a
 * no-op when dist is up to date), the Node entries `pnpm build` writes
 * (scripts/effect-entry.mjs), then each of `scripts` (node scripts, e.g. a
 * bundler), all under the lock.
 */
export const build = (tsconfig: string, ...scripts: ReadonlyArray<string>): void => {
  const tsc = Path.join(repoRoot, "node_modules/typescript/bin/tsc")
  const entries = Path.join(repoRoot, "scripts/effect-entry.mjs")
  const steps = [[tsc, "-b", tsconfig], [entries], ...scripts.map((script) => [script])]
  withBuildLock(() => {
    for (const step of steps) {
      const result = spawnSync(process.execPath, step, { cwd: repoRoot, encoding: "utf8" })
      if (result.status !== 0) {
        throw new Error(`${step.map((part) => Path.relative(repoRoot, part)).join(" ")} failed:\n${result.stdout}${result.stderr}`)
      }
    }
  })
}

export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export type Stream = "stdout" | "stderr"

export interface Running {
  readonly pid: number
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the stream so far once `pattern` appears on it; rejects if the process exits first. */
  readonly waitFor: (pattern: RegExp, stream: Stream) => Promise<string>
  readonly signal: (signal: NodeJS.Signals) => void
  /** SIGKILL, and resolves once the process is gone. */
  readonly kill: () => Promise<Exited>
  readonly exited: Promise<Exited>
}

/** Every process started and not yet exited, so a failed test leaves none behind. */
const live = new Map<number, Promise<Exited>>()

/** Kills (by pid) whatever is still running, e.g. after a failed test, and waits for it to go. */
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

/** Node running `script` with `args` (and Node's own flags `node` before the script, e.g. `--import`). */
export const start = (
  script: string,
  args: ReadonlyArray<string>,
  options: {
    readonly cwd: string
    readonly env: Readonly<Record<string, string | undefined>>
    readonly node?: ReadonlyArray<string> | undefined
  }
): Running => {
  const child = spawn(process.execPath, [...(options.node ?? []), script, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  const out = { stdout: "", stderr: "" }
  const listeners = new Set<() => void>()
  const notify = () => listeners.forEach((listener) => listener())
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream].setEncoding("utf8").on("data", (chunk: string) => {
      out[stream] += chunk
      notify()
    })
  }
  let done = false
  const exited = new Promise<Exited>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code, signal) => {
      done = true
      live.delete(child.pid!)
      notify()
      resolve({ code, signal, stdout: out.stdout, stderr: out.stderr })
    })
  })
  live.set(child.pid!, exited)
  return {
    pid: child.pid!,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    signal: (signal) => child.kill(signal),
    kill: () => {
      child.kill("SIGKILL")
      return exited
    },
    exited,
    waitFor: (pattern, stream) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (pattern.test(out[stream])) {
            listeners.delete(check)
            resolve(out[stream])
          } else if (done) {
            listeners.delete(check)
            reject(new Error(`process ${child.pid} exited before ${pattern} appeared on ${stream}:\n${out.stdout}\n${out.stderr.slice(-4000)}`))
          }
        }
        listeners.add(check)
        check()
      })
  }
}
