/* global process */
// An MCP server over streamable HTTP written with the official SDK, on
// 127.0.0.1 (a free port, printed on stdout as `PORT <n>`), refusing any
// request without `authorization: Bearer <MCP_TOKEN>` (401, echoing what it
// got; its `whoami` tool echoes the token too). Calls and the
// end of a session are appended to the JSON-lines file MCP_LOG.
import { appendFileSync } from "node:fs"
import { createServer } from "node:http"
import { randomUUID } from "node:crypto"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"

const log = (entry) => appendFileSync(process.env.MCP_LOG, JSON.stringify({ pid: process.pid, ...entry }) + "\n")
const tools = [
  {
    name: "create_ticket",
    description: "Opens a ticket",
    inputSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
    annotations: { readOnlyHint: false, destructiveHint: false }
  },
  { name: "read_note", description: "Reads a note (clashes with the notes server's)", inputSchema: { type: "object", properties: { title: { type: "string" } } }, annotations: { readOnlyHint: true } },
  { name: "crash", description: "Kills this server mid-call", inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true } },
  { name: "whoami", description: "Refuses, echoing the credentials it got", inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true } }
]

const sessions = new Map()
const newSession = async () => {
  const server = new Server({ name: "tickets", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    log({ event: "call", tool: request.params.name, arguments: request.params.arguments })
    if (request.params.name === "whoami") {
      const auth = extra.requestInfo?.headers?.authorization
      return { isError: true, content: [{ type: "text", text: `not allowed for ${auth} (token ${auth?.split(" ")[1]})` }] }
    }
    if (request.params.name === "crash") {
      process.kill(process.pid, "SIGKILL")
      return new Promise(() => {})
    }
    return { content: [{ type: "text", text: `ticket T-1 opened: ${request.params.arguments.title}` }] }
  })
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.set(id, transport),
    onsessionclosed: (id) => {
      sessions.delete(id)
      log({ event: "session-closed" })
    }
  })
  await server.connect(transport)
  return transport
}

const http = createServer(async (req, res) => {
  if (req.headers.authorization !== `Bearer ${process.env.MCP_TOKEN}`) {
    log({ event: "unauthorized" })
    // As careless servers do: the credentials it got, echoed in the error.
    const error = { code: -32001, message: `bad credentials: ${req.headers.authorization ?? "none"}` }
    res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error }))
    return
  }
  const id = req.headers["mcp-session-id"]
  const transport = id === undefined ? await newSession() : sessions.get(id)
  if (transport === undefined) {
    res.writeHead(404).end()
    return
  }
  await transport.handleRequest(req, res)
})
http.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${http.address().port}\n`))
process.on("SIGTERM", () => http.close(() => process.exit(0)))
