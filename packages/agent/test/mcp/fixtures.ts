/**
 * MCP servers for the tests, as real processes: `notes-server.mjs` (stdio)
 * and `tickets-server.mjs` (streamable HTTP with a bearer token), both
 * written with the official `@modelcontextprotocol/sdk`, and
 * `raw-server.mjs`, which answers outside the protocol. Each appends what it
 * saw to a JSON-lines log, read back with `readLog`.
 */
import { NodeServices } from "@effect/platform-node"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import { McpTools } from "../../src/index.js"

const here = new URL(".", import.meta.url).pathname

/** What a server appended to its log. */
export interface LogEntry {
  readonly pid: number
  readonly event: string
  readonly tool?: string
  readonly arguments?: unknown
  readonly env?: ReadonlyArray<string>
}

/** A fresh log file's path. */
export const logFile = () => join(mkdtempSync(join(tmpdir(), "sb-mcp-")), "log.jsonl")

export const readLog = (file: string): ReadonlyArray<LogEntry> => {
  let text = ""
  try {
    text = readFileSync(file, "utf8")
  } catch {
    return []
  }
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as LogEntry)
}

export const calls = (file: string) =>
  readLog(file).flatMap((e) => (e.event === "call" ? [{ tool: e.tool, arguments: e.arguments }] : []))

/** The process ids that started, from the log. */
export const pids = (file: string) => readLog(file).flatMap((e) => (e.event === "start" ? [e.pid] : []))

export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The stdio notes server (official SDK). */
export const notes = (log: string, options: Partial<McpTools.StdioServer> = {}) =>
  McpTools.stdio({
    name: "notes",
    command: process.execPath,
    args: [join(here, "notes-server.mjs")],
    env: { MCP_LOG: log },
    ...options
  })

/** The hand-written misbehaving server in `mode`. */
export const raw = (mode: string, log: string, env: Record<string, string> = {}) =>
  McpTools.stdio({
    name: `raw-${mode}`,
    command: process.execPath,
    args: [join(here, "raw-server.mjs")],
    env: { MCP_MODE: mode, MCP_LOG: log, ...env }
  })

export const token = "tickets-token-123"

/**
 * Starts the HTTP tickets server (official SDK) as a child process for the
 * scope; gives its URL and pid. Stopped with SIGTERM, by pid, at the end.
 */
export const ticketsServer = (log: string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly pid: number }, Error>((resume) => {
      const child = spawn(process.execPath, [join(here, "tickets-server.mjs")], {
        env: { PATH: process.env["PATH"] ?? "", MCP_LOG: log, MCP_TOKEN: token },
        stdio: ["ignore", "pipe", "inherit"]
      })
      let out = ""
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString()
        const port = /PORT (\d+)/.exec(out)?.[1]
        if (port !== undefined) resume(Effect.succeed({ url: `http://127.0.0.1:${port}/mcp`, pid: child.pid! }))
      })
      child.on("error", (error) => resume(Effect.fail(error)))
    }),
    ({ pid }) =>
      Effect.callback<void>((resume) => {
        if (!alive(pid)) return resume(Effect.void)
        process.kill(pid, "SIGTERM")
        const check = setInterval(() => {
          if (!alive(pid)) {
            clearInterval(check)
            resume(Effect.void)
          }
        }, 10)
      })
  )

export const tickets = (url: string, options: Partial<McpTools.HttpServer> = {}) =>
  McpTools.http({ name: "tickets", url, headers: { authorization: `Bearer ${token}` }, ...options })

/** What connecting needs: child processes and an HTTP client. */
export const platform = Layer.merge(NodeServices.layer, FetchHttpClient.layer)
