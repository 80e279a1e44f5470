/* global process, setInterval */
// A server that answers outside the protocol, as MCP_MODE says: `garbage` on
// stdout, a `wrong-id`, tools whose schema is `not-object`, has a `cycle` or
// nests 100,000 levels `deep`, `many` (50,000) tools, tools whose `names` are
// Object's own (`__proto__`, `constructor`...), or a `big` (100 MB) result, a
// result nested 100,000 levels deep (`deep-result`) or not a result (`bad-result`).
// Calls are logged to MCP_LOG. Written by hand: the official SDK will not
// misbehave. `stubborn` stays up when its stdin closes (and, with
// MCP_IGNORE_TERM, ignores SIGTERM too).
import { appendFileSync } from "node:fs"
import { createInterface } from "node:readline"

const mode = process.env.MCP_MODE
const log = (entry) => process.env.MCP_LOG && appendFileSync(process.env.MCP_LOG, JSON.stringify({ pid: process.pid, ...entry }) + "\n")
log({ event: "start" })
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
    case "names":
      return ["__proto__", "constructor", "toString", "hasOwnProperty"].map((name) => ({ name, inputSchema: obj }))
    case "deep":
      return [{ name: "deep", inputSchema: { type: "object", properties: { a: { $deep: true } } } }]
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
      if (mode === "deep") {
        // Written as text: JSON.stringify would overflow the stack on it.
        const depth = 100_000
        const nested = '{"type":"object","properties":{"a":'.repeat(depth) + '{"type":"string"}' + "}}".repeat(depth)
        return process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result: { tools: toolsFor() } }).replace('{"$deep":true}', nested) + "\n")
      }
      return send({ jsonrpc: "2.0", id, result: { tools: toolsFor() } })
    case "tools/call":
      log({ event: "call", tool: message.params.name, arguments: message.params.arguments })
      if (mode === "deep-result") {
        const depth = 100_000
        // Written as text, as the deep schema is.
        return process.stdout.write(`{"jsonrpc":"2.0","id":${id},"result":{"content":[],"structuredContent":{"a":` + '{"a":'.repeat(depth) + "1" + "}".repeat(depth) + "}}}\n")
      }
      if (mode === "bad-result") return send({ jsonrpc: "2.0", id, result: { content: "not a list" } })
      if (mode === "names" || mode === "deep") return send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `called ${message.params.name}` }] } })
      return send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "x".repeat(100 * 1024 * 1024) }] } })
    default:
      return send({ jsonrpc: "2.0", id, error: { code: -32601, message: "no" } })
  }
})
