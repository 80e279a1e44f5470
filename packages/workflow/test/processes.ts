/**
 * Runner processes for the fleet tests: `fixtures/runner.mjs` over the built
 * package, started, waited on by what they print (never by a clock), and
 * killed by pid.
 */
import * as Processes from "@switchboard/test-support/Processes"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
const packageDir = Path.resolve(here, "..")

/** `tsc -b` of the package and what it references (a no-op when dist is up to date). */
export const build = (): void => Processes.build(Path.join(packageDir, "tsconfig.build.json"))

export type Runner = Processes.Running
export type Exited = Processes.Exited

/** Kills (by pid) every runner still alive, e.g. after a failed test. */
export const stopAll = Processes.stopAll

export const startRunner = (env: Readonly<Record<string, string>>): Runner =>
  Processes.start(Path.join(here, "fixtures/runner.mjs"), [], { cwd: packageDir, env: { ...process.env, ...env } })

export interface LogEvent {
  readonly pid: number
  readonly at: number
  readonly ev: "submitting" | "submit" | "status" | "status-end" | "status-interrupted" | "approval" | "tool"
  /** Absent on `submitting`: the service has not answered yet. */
  readonly taskId?: string
  /** `submitting` and `submit`: the request's prompt, which names its task in the fleet tests. */
  readonly prompt?: string
  readonly pending?: ReadonlyArray<string>
  readonly activity?: string
  /** `status`: the workflow's execution id (its entity), as effect's logs name it. */
  readonly execution?: string
  readonly tag?: string
}

/**
 * The runners' shared log of submissions and status calls, as far as its
 * last whole line: a runner may be writing one while it is read (seen under
 * load: a half line failed to parse inside a wait, which then never ended).
 */
export const readLog = <E = LogEvent>(file: string): ReadonlyArray<E> => {
  if (!Fs.existsSync(file)) return []
  const text = Fs.readFileSync(file, "utf8")
  return text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as E)
}

/**
 * `promise`, or after `millis` a failure that says where things stand (a
 * diagnosis when a test is about to run out of time, not a measured duration).
 */
export const explainAfter = <A>(millis: number, promise: Promise<A>, explain: () => string | Promise<string>): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => void Promise.resolve().then(explain).then((why) => reject(new Error(why)), reject), millis)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}
