/**
 * Running the built `switchboard` as a real process, through the launcher
 * users run (bin/switchboard.js: the bundled build, or dist/bin.js for
 * `worker` and `--database`), and waiting on what it prints: no test waits on a clock,
 * every wait ends with an event (output, exit) or the test's own timeout.
 */
import * as Processes from "@switchboard/test-support/Processes"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
export const packageDir = Path.resolve(here, "..")
export const repoRoot = Path.resolve(packageDir, "../..")
export const bin = Path.join(packageDir, "bin/switchboard.js")

/**
 * Builds the CLI and everything it references (`tsc -b`, incremental: a
 * no-op when dist is up to date), each package's Node entry (dist/entry.js,
 * which scripts/effect-entry.mjs writes for every package, so @switchboard/ai
 * is built too), then the bundle (scripts/bundle.mjs).
 */
export const build = (): void => {
  Processes.build(Path.join(repoRoot, "packages/ai/tsconfig.build.json"))
  Processes.build(
    Path.join(packageDir, "tsconfig.build.json"),
    Path.join(repoRoot, "scripts/effect-entry.mjs"),
    Path.join(packageDir, "scripts/bundle.mjs")
  )
}

export type Exited = Processes.Exited

export interface Running extends Omit<Processes.Running, "waitFor"> {
  /** Resolves with the output so far once `pattern` appears on the stream (stderr unless told); rejects if the process exits first. */
  readonly waitFor: (pattern: RegExp, stream?: Processes.Stream) => Promise<string>
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

/** Kills (by pid) whatever a failed test left running, and waits for it to go. */
export const stopAll = Processes.stopAll

/** `switchboard` with `args`. */
export const start = (args: ReadonlyArray<string>, options: SpawnOptions = {}): Running => {
  const env: Record<string, string> = { ...baseEnv(), ...options.env }
  for (const name of options.unset ?? []) delete env[name]
  const running = Processes.start(bin, args, { cwd: options.cwd ?? Os.tmpdir(), env, node: options.node })
  return { ...running, waitFor: (pattern, stream = "stderr") => running.waitFor(pattern, stream) }
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

/** A service on 127.0.0.1, its address and how to stop it. */
export interface TestService {
  readonly url: string
  readonly close: () => Promise<void>
}

/**
 * A `node:http` service on 127.0.0.1 (a free port) answering every request,
 * once its body is read, with `reply(path)`: a status and a JSON body, or
 * bytes of a media type. Close it when done.
 */
export const serviceAnswering = (
  reply: (path: string, url: string) => { readonly status?: number; readonly json?: unknown; readonly bytes?: Buffer; readonly type?: string }
): Promise<TestService> =>
  new Promise((resolve) => {
    const server = Http.createServer((request, response) => {
      request.resume()
      request.on("end", () => {
        const { port } = server.address() as Net.AddressInfo
        const answer = reply(request.url ?? "/", `http://127.0.0.1:${port}`)
        response.writeHead(answer.status ?? 200, { "content-type": answer.type ?? "application/json" })
        response.end(answer.bytes ?? JSON.stringify(answer.json))
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
      })
    })
  })

/**
 * A video service on 127.0.0.1 that names its task `taskId`, whatever that
 * is: the submission answers it, every status says `succeed` with a video
 * served at `/v.mp4`. Close it when done.
 */
export const videoServiceNaming = (taskId: string): Promise<TestService> =>
  serviceAnswering((path, url) =>
    path === "/v.mp4"
      ? { bytes: Buffer.from("00000018667479706d703432", "hex"), type: "video/mp4" }
      : path === "/v1/chat/task/status"
      ? { json: { status: "succeed", video_url: `${url}/v.mp4` } }
      : { json: { id: taskId, choices: [{ message: { role: "assistant", content: "" } }] } }
  )
