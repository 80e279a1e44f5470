/**
 * Running the built `switchboard` as a real process, through the launcher
 * users run (bin/switchboard.js: the bundled build, or dist/bin.js for
 * `worker` and `--database`), and waiting on what it prints: no test waits on a clock,
 * every wait ends with an event (output, exit) or the test's own timeout.
 */
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
export const packageDir = Path.resolve(here, "..")
export const repoRoot = Path.resolve(packageDir, "../..")
export const bin = Path.join(packageDir, "bin/switchboard.js")

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

/**
 * Builds the CLI and everything it references (`tsc -b`, incremental: a
 * no-op when dist is up to date), then its bundle (scripts/bundle.mjs).
 */
export const build = (): void => {
  const tsc = Path.join(repoRoot, "node_modules/typescript/bin/tsc")
  const steps = [
    [tsc, "-b", Path.join(packageDir, "tsconfig.build.json")],
    [Path.join(packageDir, "scripts/bundle.mjs")]
  ]
  withBuildLock(repoRoot, () => {
    for (const step of steps) {
      const result = spawnSync(process.execPath, step, { cwd: repoRoot, encoding: "utf8" })
      if (result.status !== 0) throw new Error(`${step.join(" ")} failed:\n${result.stdout}${result.stderr}`)
    }
  })
}

export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface Running {
  readonly pid: number
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the output so far once `pattern` appears on the stream; rejects if the process exits first. */
  readonly waitFor: (pattern: RegExp, stream?: "stdout" | "stderr") => Promise<string>
  readonly signal: (signal: NodeJS.Signals) => void
  readonly exited: Promise<Exited>
}

export interface SpawnOptions {
  /** Added to an environment without any SWITCHBOARD_ variable. */
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
  /** Removed from the environment (e.g. `NO_COLOR`, which is set by default). */
  readonly unset?: ReadonlyArray<string>
  /** Node's own flags, before the script (e.g. `--import`). */
  readonly node?: ReadonlyArray<string>
}

/** The parent's environment without SWITCHBOARD_* (so a developer's shell cannot leak in), colours off. */
const baseEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("SWITCHBOARD_")) env[key] = value
  }
  return { ...env, NO_COLOR: "1" }
}

/** Every process started and not yet exited, so a failed test leaves none behind. */
const live = new Map<number, Promise<Exited>>()

/** Kills (by pid) whatever a failed test left running, and waits for it to go. */
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

export const start = (args: ReadonlyArray<string>, options: SpawnOptions = {}): Running => {
  const env: Record<string, string> = { ...baseEnv(), ...options.env }
  for (const name of options.unset ?? []) delete env[name]
  const child = spawn(process.execPath, [...(options.node ?? []), bin, ...args], {
    cwd: options.cwd ?? Os.tmpdir(),
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  const out = { stdout: "", stderr: "" }
  const listeners = new Set<() => void>()
  const notify = () => listeners.forEach((listener) => listener())
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out.stdout += chunk
    notify()
  })
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    out.stderr += chunk
    notify()
  })
  const exited = new Promise<Exited>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code, signal) => {
      notify()
      resolve({ code, signal, stdout: out.stdout, stderr: out.stderr })
    })
  })
  let done = false
  live.set(child.pid!, exited)
  void exited.then(() => {
    done = true
    live.delete(child.pid!)
  })
  return {
    pid: child.pid!,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    signal: (signal) => child.kill(signal),
    exited,
    waitFor: (pattern, stream = "stderr") =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (pattern.test(out[stream])) {
            listeners.delete(check)
            resolve(out[stream])
          } else if (done || child.exitCode !== null) {
            listeners.delete(check)
            reject(new Error(`exited before ${pattern} appeared on ${stream}:\n${out.stdout}\n${out.stderr}`))
          }
        }
        listeners.add(check)
        check()
      })
  }
}

/** Runs to the end. */
export const run = (args: ReadonlyArray<string>, options: SpawnOptions = {}): Promise<Exited> => start(args, options).exited

const tempDirs: Array<string> = []

export const tempDir = (prefix: string): string => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), `switchboard-cli-test-${prefix}-`))
  tempDirs.push(dir)
  return dir
}

/** Removes the directories `tempDir` made. */
export const removeTempDirs = (): void => {
  for (const dir of tempDirs.splice(0)) Fs.rmSync(dir, { recursive: true, force: true })
}

/** Lines with something on them. */
export const lines = (text: string): ReadonlyArray<string> => text.split("\n").filter((line) => line.trim() !== "")

/** Width and height from a PNG's IHDR. */
export const pngSize = (path: string): readonly [number, number] => {
  const bytes = Fs.readFileSync(path)
  expectPng(bytes)
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)]
}

const expectPng = (bytes: Buffer) => {
  if (bytes.subarray(0, 8).toString("hex") !== "89504e470d0a1a0a") throw new Error("not a PNG")
}

/** A 1×1 PNG, for `--image` and `--from`. */
export const tinyPng = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64"
)
