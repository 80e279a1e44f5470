/* global process, Buffer, setInterval, clearInterval */
// An MCP server over stdio written with the official SDK (`@modelcontextprotocol/sdk`):
// a notes store whose every call is appended, with the process id, to the
// JSON-lines file named by MCP_LOG, so that a test reads what the server saw.
import { appendFileSync } from "node:fs"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"

const log = (entry) => appendFileSync(process.env.MCP_LOG, JSON.stringify({ pid: process.pid, ...entry }) + "\n")
log({ event: "start", env: Object.keys(process.env).sort() })

const title = { type: "object", properties: { title: { type: "string", description: "The note's title" } }, required: ["title"] }
const tools = [
  { name: "read_note", description: "Reads a note", inputSchema: title, annotations: { readOnlyHint: true } },
  { name: "delete_note", description: "Deletes a note", inputSchema: title, annotations: { destructiveHint: true } },
  { name: "notes.search", description: "Searches notes", inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] }, annotations: { readOnlyHint: true } },
  { name: "photo", description: "A note's photo", inputSchema: title, annotations: { readOnlyHint: true } },
  { name: "locked", description: "Always refuses", inputSchema: title, annotations: { readOnlyHint: true } },
  { name: "crash", description: "Kills this server mid-call", inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true } },
  { name: "wait", description: "Answers when cancelled", inputSchema: { type: "object", properties: {} }, annotations: { readOnlyHint: true } }
]

const server = new Server({ name: "notes", version: "1.0.0" }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))
server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
  const { name, arguments: args } = request.params
  log({ event: "call", tool: name, arguments: args })
  switch (name) {
    case "read_note":
      return { content: [{ type: "text", text: `note ${args.title}: buy milk` }] }
    case "delete_note":
      return { content: [{ type: "text", text: `deleted ${args.title}` }] }
    case "notes.search":
      return { content: [{ type: "text", text: `found 1 note for ${args.query}` }] }
    case "photo":
      return {
        content: [
          { type: "text", text: `photo of ${args.title}` },
          { type: "image", mimeType: "image/png", data: Buffer.from("12345678").toString("base64") }
        ]
      }
    case "locked":
      return { isError: true, content: [{ type: "text", text: `${args.title} is locked` }] }
    case "crash":
      process.kill(process.pid, "SIGKILL")
      return new Promise(() => {})
    case "wait":
      return new Promise((resolve) => {
        const timer = setInterval(() => {}, 1000)
        extra.signal.addEventListener("abort", () => {
          clearInterval(timer)
          log({ event: "cancelled", tool: name })
          resolve({ content: [] })
        })
      })
    default:
      return { isError: true, content: [{ type: "text", text: `unknown tool ${name}` }] }
  }
})
await server.connect(new StdioServerTransport())
