/* global process, setInterval */
// A server that answers outside the protocol, as MCP_MODE says: `garbage` on
// stdout, a `wrong-id`, tools whose schema is `not-object` or has a `cycle`,
// `many` (50,000) tools, or a `big` (100 MB) result. Written by hand: the
// official SDK will not misbehave. `stubborn` stays up when its stdin closes
// (and, with MCP_IGNORE_TERM, ignores SIGTERM too).
import { appendFileSync } from "node:fs"
import { createInterface } from "node:readline"

const mode = process.env.MCP_MODE
if (process.env.MCP_LOG) appendFileSync(process.env.MCP_LOG, JSON.stringify({ pid: process.pid, event: "start" }) + "\n")
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n")
const obj = { type: "object", properties: { q: { type: "string" } } }
const toolsFor = () => {
  switch (mode) {
    case "not-object":
      return [{ name: "odd", inputSchema: { type: "array", items: { type: "string" } } }]
    case "cycle":
      return [{ name: "loop", inputSchema: { type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } } } }]
    case "many":
      return Array.from({ length: 50_000 }, (_, i) => ({ name: `tool_${i}`, inputSchema: obj }))
    default:
      return [{ name: "big", inputSchema: obj }]
  }
}
if (mode === "stubborn") {
  setInterval(() => {}, 1000)
  if (process.env.MCP_IGNORE_TERM) process.on("SIGTERM", () => {})
}
const lines = createInterface({ input: process.stdin })
// Like most servers, exit when the client closes stdin (unless stubborn).
lines.on("close", () => {
  if (mode !== "stubborn") process.exit(0)
})
lines.on("line", (line) => {
  const message = JSON.parse(line)
  if (message.id === undefined) return
  if (mode === "garbage") {
    process.stdout.write("this is not JSON-RPC\n")
    return
  }
  const id = mode === "wrong-id" ? message.id + 1000 : message.id
  switch (message.method) {
    case "initialize":
      return send({ jsonrpc: "2.0", id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "raw", version: "0" } } })
    case "tools/list":
      return send({ jsonrpc: "2.0", id, result: { tools: toolsFor() } })
    case "tools/call":
      return send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "x".repeat(100 * 1024 * 1024) }] } })
    default:
      return send({ jsonrpc: "2.0", id, error: { code: -32601, message: "no" } })
  }
})
