/**
 * Where the bench ran: the machine, Node and the packages measured.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { effect3IfBuilt, tag } from "./effect3.js"

/** `packages/bench`. */
export const benchDir = fileURLToPath(new URL("../../", import.meta.url))
/** The repository root. */
export const rootDir = path.resolve(benchDir, "../..")

const measuredPackages = [
  "@switchboard/core",
  "@switchboard/node",
  "@switchboard/agent",
  "effect",
  "@effect/platform-node",
  "undici",
  "openai"
]

const versionOf = (name: string): string | undefined => {
  try {
    const json = JSON.parse(fs.readFileSync(path.join(benchDir, "node_modules", name, "package.json"), "utf8")) as {
      version?: string
    }
    return json.version
  } catch {
    return undefined
  }
}

const git = (...args: Array<string>) => {
  try {
    return execFileSync("git", args, { cwd: rootDir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return undefined
  }
}

export interface Machine {
  readonly cpu: string
  readonly cores: number
  readonly memory: string
  readonly os: string
  readonly node: string
  readonly packages: ReadonlyArray<readonly [string, string]>
  readonly commit: string
  readonly date: string
}

export const machine = (): Machine => {
  const cpus = os.cpus()
  const head = git("rev-parse", "--short", "HEAD")
  const edition = effect3IfBuilt()
  const dirty = git("status", "--porcelain")
  return {
    cpu: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    node: process.version,
    packages: [
      ...measuredPackages.flatMap((name) => {
        const version = versionOf(name)
        return version === undefined ? [] : [[name, version] as const]
      }),
      ...(edition === undefined ? [] : [[
        "Effect 3 edition",
        `main's last Effect 3 commit, \`${tag}\`, effect ${edition.effectVersion}, built in ${edition.dir.replace(os.homedir(), "~")}`
      ] as const])
    ],
    commit: head === undefined ? "unknown" : `${head}${dirty ? " with uncommitted changes" : ""}`,
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z")
  }
}
