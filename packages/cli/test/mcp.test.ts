/**
 * `switchboard mcp` as a real process, used by the official MCP client
 * (`@modelcontextprotocol/sdk`): over stdio (the SDK starts the command),
 * and over streamable HTTP against a `switchboard emulator` process given
 * as the real service (its key must never come out); and by effect's
 * `McpClient`, through `McpTools`, over stdio.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { McpTools } from "@switchboard/agent"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Http from "node:http"
import type * as Net from "node:net"
import { bin, build, removeTempDirs, start, stopAll, tempDir } from "./helpers.js"

const apiKey = "sk-mcp-test-secret-4242"

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The environment of a child: no SWITCHBOARD_ variable but the ones given. */
const env = (extra: Record<string, string> = {}) => {
  const out: Record<string, string> = { NO_COLOR: "1" }
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("SWITCHBOARD_")) out[key] = value
  }
  return { ...out, ...extra }
}

const textOf = (result: unknown) =>
  (result as CallToolResult).content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")

/** The official client over stdio, running `switchboard mcp <args>`; its stderr kept. */
const stdioClient = async (args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp", ...args],
    env: env(extraEnv),
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const client = new Client({ name: "mcp-test", version: "1.0.0" })
  await client.connect(transport)
  return { client, transport, stderr: () => stderr }
}

/**
 * A service whose image (at `/big.png`) is 128 MiB, sent as fast as its
 * reader takes it: `written` counts what it sent before the reader went away.
 */
const bigImageService = (): Promise<{ readonly url: string; readonly written: () => number; readonly close: () => Promise<void> }> =>
  new Promise((resolve) => {
    let written = 0
    const server = Http.createServer((request, response) => {
      request.resume()
      request.on("end", () => {
        const { port } = server.address() as Net.AddressInfo
        if (request.url === "/big.png") {
          response.writeHead(200, { "content-type": "image/png" })
          const chunk = Buffer.alloc(1024 * 1024)
          const pump = () => {
            while (!response.destroyed && written < 128 * 1024 * 1024) {
              written += chunk.length
              if (!response.write(chunk)) return void response.once("drain", pump)
            }
            response.end()
          }
          return pump()
        }
        const content = `![a fox](http://127.0.0.1:${port}/big.png)`
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ id: "chatcmpl-1", choices: [{ message: { role: "assistant", content } }] }))
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        written: () => written,
        close: () => new Promise((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
      })
    })
  })

let emulator: ReturnType<typeof start>
let serviceUrl = ""

beforeAll(async () => {
  build()
  emulator = start(["emulator", "--port", "0", "--api-key", apiKey])
  const out = await emulator.waitFor(/listening on (http:\/\/\S+)\/v1/, "stdout")
  serviceUrl = /listening on (http:\/\/\S+)\/v1/.exec(out)![1]!
}, 600_000)

afterAll(async () => {
  await stopAll()
  removeTempDirs()
})

describe("switchboard mcp over stdio, used by the official client", { timeout: 120_000 }, () => {
  it("lists the tools with schemas and true annotations, calls moderate, embed, generate_image and generate_video", async () => {
    const journal = tempDir("mcp-journal")
    const { client, stderr, transport } = await stdioClient(["--emulator", "--journal", journal, "--poll-interval", "100ms"])
    const pid = transport.pid!
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(["list_models", "moderate", "embed", "chat", "generate_image", "generate_video"])
    const byName = new Map(tools.map((t) => [t.name, t]))
    expect(byName.get("moderate")!.inputSchema).toMatchObject({
      type: "object",
      properties: { text: { type: "string", description: "The text to check" } },
      required: ["text"]
    })
    expect(byName.get("moderate")!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    expect(byName.get("generate_video")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false })
    expect(byName.get("generate_image")!.annotations).toMatchObject({ readOnlyHint: false })

    const moderation = JSON.parse(textOf(await client.callTool({ name: "moderate", arguments: { text: "hello there" } })))
    expect(moderation.flagged).toBe(false)
    const embedded = JSON.parse(textOf(await client.callTool({ name: "embed", arguments: { texts: ["a cat", "a dog"] } })))
    expect(embedded.vectors).toHaveLength(2)
    expect(embedded.vectors[0]).toHaveLength(embedded.dimensions)

    const image = (await client.callTool({ name: "generate_image", arguments: { prompt: "a red fox", include_bytes: true } })) as CallToolResult
    expect(JSON.parse(textOf(image)).urls).toHaveLength(1)
    const picture = image.content.find((block) => block.type === "image")
    expect(picture).toMatchObject({ type: "image" })
    expect(Buffer.from((picture as { data: string }).data, "base64").length).toBeGreaterThan(0)

    const updates: Array<Progress> = []
    const video = await client.callTool({ name: "generate_video", arguments: { prompt: "a cat on a boat" } }, undefined, {
      onprogress: (update) => updates.push(update)
    })
    const made = JSON.parse(textOf(video))
    expect(made.video_url).toMatch(/\.mp4$/)
    // Submitted (0), queued (0), processing (50); the last one may come after the result.
    expect(updates.map((u) => u.progress).slice(0, 3)).toEqual([0, 0, 50])
    expect(updates[0]!.message).toContain(made.task_id)

    const refused = (await client.callTool({ name: "embed", arguments: { texts: "not a list" } }).catch((e: Error) => e)) as Error | CallToolResult
    expect("message" in refused ? refused.message : textOf(refused)).toContain("invalid arguments for embed")

    await client.close()
    expect(stderr()).toContain("embedded emulator")
    expect(alive(pid)).toBe(false)
  })

  it("a video task survives a restart: the new server follows it and gives its URL for the task id", async () => {
    const journal = tempDir("mcp-resume")
    const service = { SWITCHBOARD_BASE_URL: serviceUrl, SWITCHBOARD_API_KEY: apiKey }
    const first = await stdioClient(["--journal", journal, "--poll-interval", "100ms"], service)
    let taskId = ""
    const call = first.client.callTool({ name: "generate_video", arguments: { prompt: "a slow sunrise" } }, undefined, {
      onprogress: (update) => {
        taskId ||= /task (\S+):/.exec(update.message ?? "")?.[1] ?? ""
      }
    })
    call.catch(() => undefined)
    while (taskId === "") await new Promise((resolve) => setImmediate(resolve))
    await first.client.close()
    expect(first.stderr()).not.toContain(apiKey)

    const second = await stdioClient(["--journal", journal, "--poll-interval", "100ms"], service)
    const result = JSON.parse(textOf(await second.client.callTool({ name: "generate_video", arguments: { task_id: taskId } })))
    expect(result).toEqual({ task_id: taskId, video_url: expect.stringContaining(`${taskId}.mp4`) })
    await second.client.close()
    expect(second.stderr()).toContain(`Following 1 video task(s) from the journal: ${taskId}`)
    expect(second.stderr()).not.toContain(apiKey)
  })

  it("an image the service serves past 8 MiB is a tool error, read no further (it was read whole, however large)", async () => {
    const service = await bigImageService()
    try {
      const { client } = await stdioClient(["--journal", tempDir("mcp-big")], { SWITCHBOARD_BASE_URL: service.url, SWITCHBOARD_API_KEY: apiKey })
      const result = (await client.callTool({ name: "generate_image", arguments: { prompt: "a fox", include_bytes: true } })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain("larger than 8388608 bytes")
      expect(service.written()).toBeLessThan(64 * 1024 * 1024)
      await client.close()
    } finally {
      await service.close()
    }
  })
})

describe("switchboard mcp used by effect's McpClient (through McpTools)", { timeout: 120_000 }, () => {
  it("lists the six tools with names the service accepts, checks arguments against their schemas, calls them", async () => {
    const program = Effect.gen(function*() {
      const mcp = yield* McpTools.connect({
        servers: [McpTools.stdio({ name: "switchboard", command: process.execPath, args: [bin, "mcp", "--emulator", "--journal", tempDir("mcp-effect")] })]
      })
      const call = (name: string, params: unknown) =>
        Effect.flatMap(mcp.toolkit.handle(name, params), Stream.runLast).pipe(Effect.map((last) => Option.getOrThrow(last).result))
      return {
        names: mcp.names.map((n) => [n.name, n.readOnly]),
        models: yield* call("list_models", {}),
        refused: yield* Effect.flip(call("embed", { texts: "not a list" }))
      }
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(NodeServices.layer, FetchHttpClient.layer)))
    const { models, names, refused } = await Effect.runPromise(program)
    expect(names).toEqual([
      ["list_models", true],
      ["moderate", true],
      ["embed", true],
      ["chat", true],
      ["generate_image", false],
      ["generate_video", false]
    ])
    expect(JSON.parse(models as string)).toContain("gpt-4o-mini")
    // Refused by the server's own schema, imported by McpTools, before the server sees it.
    expect(refused).toMatchObject({ _tag: "AiError" })
    expect(String(refused)).toContain("texts")
  })
})

describe("switchboard mcp --http", { timeout: 120_000 }, () => {
  it("refuses requests without its token (401) and from origins not allowed (403); the official client with the token works; the key never shows", async () => {
    const token = "mcp-token-for-the-test"
    const server = start(["mcp", "--http", "--port", "0", "--token", token, "--allowed-origin", "http://localhost:5173", "--journal", tempDir("mcp-http")], {
      env: { SWITCHBOARD_BASE_URL: serviceUrl, SWITCHBOARD_API_KEY: apiKey }
    })
    const out = await server.waitFor(/MCP server on (http:\/\/\S+)/)
    const url = /MCP server on (http:\/\/\S+)/.exec(out)![1]!
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "curl", version: "0" } }
    })
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
    expect((await fetch(url, { method: "POST", headers, body: initialize })).status).toBe(401)
    expect((await fetch(url, { method: "POST", headers: { ...headers, authorization: "Bearer wrong" }, body: initialize })).status).toBe(401)
    const evil = await fetch(url, { method: "POST", headers: { ...headers, authorization: `Bearer ${token}`, origin: "https://evil.example" }, body: initialize })
    expect(evil.status).toBe(403)

    const client = new Client({ name: "mcp-test", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
    await client.connect(transport)
    expect((await client.listTools()).tools).toHaveLength(6)
    // A body over 16 MiB is refused (a JSON-RPC parse error) and never read whole: a 20 MiB ping was answered.
    const session = { ...headers, authorization: `Bearer ${token}`, "mcp-session-id": transport.sessionId! }
    const padded = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping", params: { _meta: { pad: "x".repeat(20 * 1024 * 1024) } } })
    expect(await (await fetch(url, { method: "POST", headers: session, body: padded })).json()).toMatchObject({ error: { code: -32700 } })
    const models = textOf(await client.callTool({ name: "list_models", arguments: {} }))
    expect(JSON.parse(models)).toContain("gpt-4o-mini")
    const reply = textOf(await client.callTool({ name: "chat", arguments: { prompt: "Say hi" } }))
    expect(reply).toContain("Say hi")
    const failed = (await client.callTool({ name: "chat", arguments: { prompt: "hi", model: "no-such-model" } })) as CallToolResult
    expect(failed.isError).toBe(true)
    expect(textOf(failed)).not.toContain(apiKey)
    await client.close()
    server.signal("SIGINT")
    const exited = await server.exited
    expect(exited.stdout + exited.stderr).not.toContain(apiKey)
  })
})
