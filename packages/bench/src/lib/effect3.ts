/**
 * The Effect 3 edition, measured beside ours in the same run: main's last
 * Effect 3 commit (2ccd179, which every clone has: the `effect-3` branch and
 * its tag are not published) checked out once into a worktree of its own (outside this
 * repository's tree: TypeScript treats anything under a `node_modules`
 * folder as a library and would not build it there), installed from its own
 * lockfile and built. Its bench's `dist/` speaks the same IPC as ours (the
 * bench did not change between the editions), so its client and cold-start
 * scripts run as they are, on the Node that runs this bench.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { rootDir } from "./machine.js"

/** main's last commit on Effect 3 (the parent of the Effect 4 port). */
export const commit = "2ccd17923c8417038a49749e419b9438cb647aca"
/** How reports name it. */
export const tag = "2ccd179"

export interface Effect3 {
  readonly dir: string
  readonly commit: string
  /** `effect`'s version in that edition. */
  readonly effectVersion: string
  /** A script of that edition's built bench, e.g. `client.js`, `cold/switchboard.js`. */
  readonly bench: (file: string) => string
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string) => {
  const result = spawnSync(command, [...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 15 * 60_000 })
  if (result.status !== 0) {
    const output = `${result.stderr ?? ""}\n${result.stdout ?? ""}`.trim().split("\n").slice(-3).join(" ")
    throw new Error(`\`${command} ${args.join(" ")}\` failed in ${cwd}: ${output || (result.error?.message ?? `status ${result.status}`)}`)
  }
  return result.stdout.trim()
}

/** pnpm as the bench was started (`npm_execpath`), else the one on PATH. */
const pnpm = (args: ReadonlyArray<string>, cwd: string) => {
  const execPath = process.env["npm_execpath"]
  return execPath !== undefined && /pnpm/.test(execPath)
    ? run(process.execPath, [execPath, ...args], cwd)
    : run("pnpm", args, cwd)
}

const build = (log: (line: string) => void): Effect3 => {
  run("git", ["cat-file", "-e", `${commit}^{commit}`], rootDir)
  const dir = process.env["SWITCHBOARD_BENCH_EFFECT3_DIR"] ??
    path.join(os.homedir(), ".cache", "switchboard-bench", `effect-3-${commit.slice(0, 12)}`)
  const marker = path.join(dir, ".bench-built")
  if (!fs.existsSync(marker) || fs.readFileSync(marker, "utf8").trim() !== commit) {
    log(`  building the Effect 3 edition (${tag}, ${commit.slice(0, 7)}) in ${dir}`)
    if (!fs.existsSync(path.join(dir, ".git"))) {
      fs.mkdirSync(path.dirname(dir), { recursive: true })
      run("git", ["worktree", "prune"], rootDir)
      run("git", ["worktree", "add", "--detach", dir, commit], rootDir)
    }
    pnpm(["install", "--frozen-lockfile", "--prefer-offline"], dir)
    pnpm(["-s", "build"], dir)
    fs.writeFileSync(marker, `${commit}\n`)
  }
  const effectPackage = path.join(dir, "packages", "bench", "node_modules", "effect", "package.json")
  return {
    dir,
    commit,
    effectVersion: (JSON.parse(fs.readFileSync(effectPackage, "utf8")) as { version: string }).version,
    bench: (file) => path.join(dir, "packages", "bench", "dist", file)
  }
}

let built: Effect3 | { readonly error: string } | undefined

/**
 * The Effect 3 edition, built on first use (once per machine and commit);
 * `{ error }` when it cannot be: each figure then says so in a row.
 */
export const effect3 = (log: (line: string) => void): Effect3 | { readonly error: string } => {
  if (built === undefined) {
    try {
      built = build(log)
    } catch (error) {
      built = { error: `the Effect 3 edition could not be built: ${error instanceof Error ? error.message : String(error)}` }
      log(`  ${built.error}`)
    }
  }
  return built
}

/** The edition if this run built or found it, without building it. */
export const effect3IfBuilt = (): Effect3 | undefined => (built !== undefined && isBuilt(built) ? built : undefined)

export const isBuilt = (edition: Effect3 | { readonly error: string }): edition is Effect3 => !("error" in edition)
