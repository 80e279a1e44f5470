/**
 * An agent workflow whose tools come from an MCP server (a real child
 * process over stdio) through `McpTools`: the toolkit carries its handlers,
 * so the workflow's layer needs none; the tool call is an activity like any.
 */
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { McpTools } from "@switchboard/agent"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AgentWorkflow } from "../src/index.js"
import { drive, emulated } from "./fixtures.js"

const server = new URL("./fixtures/mcp-notes.mjs", import.meta.url).pathname

describe("AgentWorkflow with MCP tools", () => {
  it.effect("runs an MCP tool call as an activity and finishes", () =>
    Effect.gen(function*() {
      const log = join(mkdtempSync(join(tmpdir(), "sb-wf-mcp-")), "calls.jsonl")
      const mcp = yield* McpTools.connect({
        servers: [McpTools.stdio({ name: "notes", command: process.execPath, args: [server], env: { MCP_LOG: log }, prefix: "notes_" })]
      })
      const agent = AgentWorkflow.make({ name: "McpAgent", toolkit: mcp.toolkit })
      const outcome = yield* Effect.flatMap(
        Effect.forkChild(agent.run("mcp-1", "gpt-4o-mini", [{ role: "user", content: `notes_read_note({"title": "groceries"})` }])),
        drive
      ).pipe(Effect.provide(agent.layer.pipe(Layer.provideMerge(WorkflowEngine.layerMemory))))
      expect(outcome.status).toBe("completed")
      expect(outcome.text).toContain(`notes_read_note → "note groceries"`)
      expect(readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line))).toEqual([
        { name: "read_note", arguments: { title: "groceries" } }
      ])
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(emulated(), NodeServices.layer, FetchHttpClient.layer))))
})
