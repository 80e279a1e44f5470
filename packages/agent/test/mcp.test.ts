/**
 * MCP tools in agent runs, across real processes: the emulator over HTTP,
 * a stdio server and an HTTP server written with the official
 * `@modelcontextprotocol/sdk`, and a hand-written server that breaks the
 * protocol. What a server received is read from its own log.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import { Emulator } from "@switchboard/emulator"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { Agent, McpTools } from "../src/index.js"
import { awaitSleepers, emulated, waitUntil } from "./fixtures.js"
import { alive, calls, logFile, notes, pids, platform, raw, readLog, tickets, ticketsServer, token } from "./mcp/fixtures.js"

const model = "gpt-4o-mini"
const user = (content: string): Protocol.Message => ({ role: "user", content })
const setup = Effect.provide(Layer.merge(emulated(), platform))

/** The tool names of every chat request the emulator received. */
const sentToolNames = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) =>
  requests
    .filter((r) => r.path.endsWith("/chat/completions"))
    .map((r) => ((r.body as { readonly tools?: ReadonlyArray<Protocol.Tool> }).tools ?? []).map((t) => t.function.name)))

const chatRequests = Effect.map(sentToolNames, (sent) => sent.length)

describe("McpTools in Agent.run", () => {
  it.effect("one run uses a stdio server and an HTTP server with a bearer token, each called once, prefixes on the names", () =>
    Effect.gen(function*() {
      const notesLog = logFile()
      const ticketsLog = logFile()
      const pid = yield* Effect.scoped(Effect.gen(function*() {
        const server = yield* ticketsServer(ticketsLog)
        const result = yield* Effect.scoped(Effect.gen(function*() {
          const mcp = yield* McpTools.connect({
            servers: [
              notes(notesLog, { prefix: "notes_" }),
              tickets(server.url, { prefix: "tickets_", include: ["create_ticket"] })
            ]
          })
          expect(mcp.names.find((n) => n.tool === "notes.search")).toMatchObject({ name: "notes_notes_search", server: "notes" })
          return yield* Agent.run({
            model,
            toolkit: mcp.toolkit,
            messages: [user(`notes_read_note({"title":"groceries"}) and tickets_create_ticket({"title":"buy milk"})`)]
          })
        }))
        expect(result.status).toBe("completed")
        expect(result.steps[0]!.toolResults.map((r) => [r.name, r.outcome, r.content])).toEqual([
          ["notes_read_note", "success", "note groceries: buy milk"],
          ["tickets_create_ticket", "success", "ticket T-1 opened: buy milk"]
        ])
        // The servers' own logs: each tool once, with the arguments the model gave.
        expect(calls(notesLog)).toEqual([{ tool: "read_note", arguments: { title: "groceries" } }])
        expect(calls(ticketsLog)).toEqual([{ tool: "create_ticket", arguments: { title: "buy milk" } }])
        // The HTTP session was ended when the scope closed.
        expect(readLog(ticketsLog).some((e) => e.event === "session-closed")).toBe(true)
        // The names the service saw carry the prefixes, the mapped one too.
        const sent = yield* sentToolNames
        expect(sent[0]).toEqual([
          "notes_read_note",
          "notes_delete_note",
          "notes_notes_search",
          "notes_photo",
          "notes_locked",
          "notes_crash",
          "notes_wait",
          "tickets_create_ticket"
        ])
        return pids(notesLog)[0]!
      }))
      expect(alive(pid)).toBe(false)
    }).pipe(setup))

  it.effect("local tools and MCP tools in one toolkit, the local handlers bound at connect", () =>
    Effect.gen(function*() {
      const log = logFile()
      const Clock = Tool.make("local_time", { success: Schema.String })
      const local = Toolkit.make(Clock)
      const mcp = yield* McpTools.connect({ servers: [notes(log, { include: ["read_note"] })], local }).pipe(
        Effect.provide(local.toLayer({ local_time: () => Effect.succeed("12:00") }))
      )
      expect(Object.keys(mcp.toolkit.tools)).toEqual(["local_time", "read_note"])
      const result = yield* Agent.run({ model, toolkit: mcp.toolkit, messages: [user(`local_time and read_note({"title":"x"})`)] })
      expect(result.steps[0]!.toolResults.map((r) => [r.name, r.outcome, r.content])).toEqual([
        ["local_time", "success", "12:00"],
        ["read_note", "success", "note x: buy milk"]
      ])
    }).pipe(Effect.scoped, setup))

  it.effect("the stdio server's environment does not carry the parent's API key", () =>
    Effect.gen(function*() {
      const log = logFile()
      process.env["SWITCHBOARD_API_KEY"] = "sk-parent-secret"
      yield* Effect.scoped(McpTools.connect({ servers: [notes(log)] })).pipe(
        Effect.ensuring(Effect.sync(() => delete process.env["SWITCHBOARD_API_KEY"]))
      )
      const env = readLog(log).find((e) => e.event === "start")!.env!
      expect(env).toContain("MCP_LOG")
      expect(env).not.toContain("SWITCHBOARD_API_KEY")
    }).pipe(setup))

  it.effect("colliding names, across servers or with a local tool, fail before the first request and name both", () =>
    Effect.gen(function*() {
      const ticketsLog = logFile()
      const server = yield* ticketsServer(ticketsLog)
      const across = yield* Effect.flip(Effect.scoped(McpTools.connect({ servers: [notes(logFile()), tickets(server.url)] })))
      expect(across._tag).toBe("ConfigurationError")
      expect(across.message).toContain("tool read_note of MCP server notes")
      expect(across.message).toContain("tool read_note of MCP server tickets")
      const Local = Tool.make("read_note", { parameters: Schema.Struct({ title: Schema.String }), success: Schema.String })
      const localKit = Toolkit.make(Local)
      const local = yield* Effect.flip(Effect.scoped(McpTools.connect({ servers: [notes(logFile())], local: localKit }))).pipe(
        Effect.provide(localKit.toLayer({ read_note: () => Effect.succeed("local") }))
      )
      expect(local.message).toContain("local tool read_note")
      expect(local.message).toContain("tool read_note of MCP server notes")
      expect(yield* chatRequests).toBe(0)
    }).pipe(Effect.scoped, setup))

  it.effect("an HTTP server refusing the request (no bearer token: 401) is a typed error naming it", () =>
    Effect.gen(function*() {
      const log = logFile()
      const server = yield* ticketsServer(log)
      const error = yield* Effect.flip(Effect.scoped(McpTools.connect({ servers: [tickets(server.url, { headers: {} })] })))
      expect(error).toMatchObject({ _tag: "McpServerError", server: "tickets" })
      expect(error.message).toContain("401")
      expect(error.message).not.toContain(token)
      expect(readLog(log).map((e) => e.event)).toContain("unauthorized")
    }).pipe(Effect.scoped, setup))

  it.effect("a server's secrets never come back from it: a 401 echoing the bearer token, a failure echoing it, are redacted", () =>
    Effect.gen(function*() {
      const server = yield* ticketsServer(logFile())
      const wrong = "Bearer wrong-secret-4242"
      const refused = yield* Effect.flip(Effect.scoped(McpTools.connect({ servers: [tickets(server.url, { headers: { authorization: wrong } })] })))
      expect(refused.message).toContain("bad credentials: [redacted]")
      expect(refused.message).not.toContain("wrong-secret-4242")
      const mcp = yield* McpTools.connect({ servers: [tickets(server.url, { include: ["whoami"] })] })
      const result = yield* Agent.run({ model, toolkit: mcp.toolkit, messages: [user("whoami")] })
      const [whoami] = result.steps[0]!.toolResults
      expect(whoami!.content).toContain("not allowed for [redacted] (token [redacted])")
      expect(JSON.stringify(result.transcript)).not.toContain(token)
    }).pipe(Effect.scoped, setup))

  it.effect("a server killed mid-call is a tool failure with its reason; the other tools work and the run completes", () =>
    Effect.gen(function*() {
      const ticketsLog = logFile()
      const server = yield* ticketsServer(ticketsLog)
      const mcp = yield* McpTools.connect({ servers: [notes(logFile()), tickets(server.url, { include: ["create_ticket"] })] })
      const result = yield* Agent.run({
        model,
        toolkit: mcp.toolkit,
        messages: [user(`crash then create_ticket({"title":"after the crash"})`)]
      })
      expect(result.status).toBe("completed")
      const [crash, ticket] = result.steps.flatMap((s) => s.toolResults)
      expect(crash!.outcome).toBe("failure")
      expect(crash!.content).toContain("McpToolError")
      expect(crash!.content).toContain("MCP server closed stdout")
      expect(ticket!.outcome).toBe("success")
      expect(calls(ticketsLog)).toEqual([{ tool: "create_ticket", arguments: { title: "after the crash" } }])
    }).pipe(Effect.scoped, setup))

  it.effect("an HTTP server killed mid-call is a tool failure too, never a defect", () =>
    Effect.gen(function*() {
      const server = yield* ticketsServer(logFile())
      const mcp = yield* McpTools.connect({ servers: [tickets(server.url, { include: ["crash"] })] })
      const result = yield* Agent.run({ model, toolkit: mcp.toolkit, messages: [user("crash")] })
      const [crash] = result.steps[0]!.toolResults
      expect(crash!.outcome).toBe("failure")
      expect(crash!.content).toContain("McpToolError")
      expect(crash!.content).toContain("TransportError")
    }).pipe(Effect.scoped, setup))

  it.effect("a destructive tool pauses the run; a denied resume never reaches the server", () =>
    Effect.gen(function*() {
      const log = logFile()
      const mcp = yield* McpTools.connect({ servers: [notes(log, { approval: "destructive" })] })
      expect(mcp.names.filter((n) => n.needsApproval).map((n) => n.name)).toEqual(["delete_note"])
      const paused = yield* Agent.run({
        model,
        toolkit: mcp.toolkit,
        messages: [user(`delete_note({"title":"groceries"})`)]
      })
      expect(paused.status).toBe("paused")
      expect(paused.pending.map((p) => p.name)).toEqual(["delete_note"])
      const resumed = yield* Agent.resume({
        model,
        toolkit: mcp.toolkit,
        transcript: paused.transcript,
        decisions: { [paused.pending[0]!.approvalId]: "deny" }
      })
      expect(resumed.status).toBe("completed")
      const denied = resumed.transcript.find((m) => m.role === "tool")
      expect(denied?.content).toContain("the user denied this call to delete_note")
      expect(calls(log)).toEqual([])
    }).pipe(Effect.scoped, setup))

  it.effect("results: isError is a failure the model reads, an image is described, bad arguments never reach the server", () =>
    Effect.gen(function*() {
      const log = logFile()
      const mcp = yield* McpTools.connect({ servers: [notes(log)] })
      const result = yield* Agent.run({
        model,
        toolkit: mcp.toolkit,
        messages: [user(`locked({"title":"diary"}) and photo({"title":"cat"}) and read_note({"title":5})`)]
      })
      const [locked, photo, bad] = result.steps[0]!.toolResults
      expect(locked!.outcome).toBe("failure")
      expect(locked!.content).toContain("diary is locked")
      expect(photo).toMatchObject({ outcome: "success", content: "photo of cat\n[image image/png, 8 bytes]" })
      expect(bad!.outcome).toBe("invalid-arguments")
      expect(calls(log).map((c) => c.tool)).toEqual(["locked", "photo"])
    }).pipe(Effect.scoped, setup))

  it.effect("a server that never answers a call: `timeout` gives the model `timeout`, and the server is told to cancel", () =>
    Effect.gen(function*() {
      const log = logFile()
      const mcp = yield* McpTools.connect({ servers: [notes(log, { timeout: "30 seconds" })] })
      const fiber = yield* Effect.forkChild(Agent.run({ model, toolkit: mcp.toolkit, messages: [user("wait")] }))
      // The server has the call (else the time would run out before it was sent: no cancellation to see).
      yield* waitUntil(Effect.sync(() => calls(log).length), (n) => n === 1)
      yield* awaitSleepers(1, 30_000)
      yield* TestClock.adjust("30 seconds")
      const result = yield* Fiber.join(fiber)
      expect(result.steps[0]!.toolResults.map((r) => [r.name, r.outcome])).toEqual([["wait", "timeout"]])
      yield* waitUntil(Effect.sync(() => readLog(log).filter((e) => e.event === "cancelled").length), (n) => n === 1)
    }).pipe(Effect.scoped, setup))

  it.effect("`timeout` holds outside an agent run too: the toolkit's own handle (what LanguageModel.generateText calls) fails", () =>
    Effect.gen(function*() {
      const log = logFile()
      const mcp = yield* McpTools.connect({ servers: [notes(log, { timeout: "30 seconds" })] })
      const fiber = yield* Effect.forkChild(Effect.flatMap(mcp.toolkit.handle("wait", {}), Stream.runLast))
      yield* waitUntil(Effect.sync(() => calls(log).length), (n) => n === 1)
      yield* awaitSleepers(1, 30_000)
      yield* TestClock.adjust("30 seconds")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({ _tag: "McpToolError", server: "notes", tool: "wait" })
      expect(error.message).toContain("TimeoutError")
      yield* waitUntil(Effect.sync(() => readLog(log).filter((e) => e.event === "cancelled").length), (n) => n === 1)
    }).pipe(Effect.scoped, setup))

  it.effect("interrupting a run mid-call stops the server: no child is left", () =>
    Effect.gen(function*() {
      const log = logFile()
      const fiber = yield* Effect.forkChild(Effect.scoped(Effect.gen(function*() {
        const mcp = yield* McpTools.connect({ servers: [notes(log)] })
        return yield* Agent.run({ model, toolkit: mcp.toolkit, messages: [user("wait")] })
      })))
      yield* waitUntil(Effect.sync(() => calls(log).length), (n) => n === 1)
      const exit = yield* Fiber.interrupt(fiber).pipe(Effect.andThen(Fiber.await(fiber)))
      expect(Exit.hasInterrupts(exit)).toBe(true)
      expect(alive(pids(log)[0]!)).toBe(false)
    }).pipe(setup))

  // The scope's end closes the child's stdin and waits 5 s (the clock's) for it to exit, then sends
  // SIGTERM, and SIGKILL 5 s (real time, in @effect/platform-node) later.
  const stopsStubborn = (env: Record<string, string>) =>
    Effect.gen(function*() {
      const log = logFile()
      const fiber = yield* Effect.forkChild(Effect.scoped(McpTools.connect({ servers: [raw("stubborn", log, env)] })))
      yield* awaitSleepers(1, 5000)
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(fiber)
      expect(alive(pids(log)[0]!)).toBe(false)
    })

  it.effect("a child that ignores the end of its stdin gets SIGTERM", () => stopsStubborn({}).pipe(setup))

  it.effect("a child that ignores SIGTERM too gets SIGKILL", () => stopsStubborn({ MCP_IGNORE_TERM: "1" }).pipe(setup), 20_000)

  it.effect("a run whose fiber dies (a local tool's defect) leaves no child", () =>
    Effect.gen(function*() {
      const log = logFile()
      const Boom = Tool.make("boom", { success: Schema.String })
      const local = Toolkit.make(Boom)
      const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
        const mcp = yield* McpTools.connect({ servers: [notes(log)], local }).pipe(
          Effect.provide(local.toLayer({ boom: () => Effect.die("crashed") }))
        )
        return yield* Agent.run({ model, toolkit: mcp.toolkit, messages: [user("boom")] })
      })))
      expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({ _tag: "ToolDefect", tool: "boom" })
      expect(alive(pids(log)[0]!)).toBe(false)
    }).pipe(setup))
})

describe("McpTools: servers outside the protocol give a typed error naming the server", () => {
  const connectError = (mode: string) =>
    Effect.gen(function*() {
      const log = logFile()
      const error = yield* Effect.flip(Effect.scoped(McpTools.connect({ servers: [raw(mode, log)] })))
      for (const pid of pids(log)) expect(alive(pid)).toBe(false)
      return error
    })

  it.effect("garbage on stdout", () =>
    Effect.gen(function*() {
      const error = yield* connectError("garbage")
      expect(error).toMatchObject({ _tag: "McpServerError", server: "raw-garbage" })
      expect(error.message).toContain("ProtocolError")
    }).pipe(setup))

  it.effect("a wrong JSON-RPC id matches no request: over stdio the connection ends at connectTimeout, naming the server", () =>
    Effect.gen(function*() {
      const log = logFile()
      const fiber = yield* Effect.forkChild(Effect.flip(Effect.scoped(McpTools.connect({ servers: [raw("wrong-id", log)] }))))
      yield* awaitSleepers(1, 60_000)
      yield* TestClock.adjust("60 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "McpServerError", server: "raw-wrong-id" })
      expect(error.message).toContain("TimeoutError")
      for (const pid of pids(log)) expect(alive(pid)).toBe(false)
    }).pipe(setup))

  it.effect("a tool schema that is not an object", () =>
    Effect.gen(function*() {
      const error = yield* connectError("not-object")
      expect(error).toMatchObject({ _tag: "McpServerError", server: "raw-not-object" })
    }).pipe(setup))

  it.effect("a schema with $ref cycles", () =>
    Effect.gen(function*() {
      const error = yield* connectError("cycle")
      expect(error).toMatchObject({ _tag: "McpServerError", server: "raw-cycle", tool: "loop" })
      expect(error.message).toContain("$defs/A -> $defs/B -> $defs/A")
    }).pipe(setup))

  it.effect("a schema nested 100,000 levels deep is refused, naming the tool (it overflowed the stack: a defect)", () =>
    Effect.gen(function*() {
      const error = yield* connectError("deep")
      expect(error).toMatchObject({ _tag: "McpServerError", server: "raw-deep", tool: "deep" })
      expect(error.message).toContain("nests deeper than a chat request may (128 levels)")
    }).pipe(setup))

  it.effect("tools named `__proto__`, `constructor`, `toString` are tools like any other (`__proto__` had no handler: a defect)", () =>
    Effect.gen(function*() {
      const log = logFile()
      const mcp = yield* McpTools.connect({ servers: [raw("names", log)] })
      expect(Object.keys(mcp.toolkit.tools)).toEqual(["__proto__", "constructor", "toString", "hasOwnProperty"])
      const result = yield* Agent.run({
        model,
        toolkit: mcp.toolkit,
        messages: [user(`__proto__({"q":"a"}) and constructor({"q":"b"}) and toString({"q":"c"})`)]
      })
      expect(result.steps[0]!.toolResults.map((r) => [r.name, r.outcome, r.content])).toEqual([
        ["__proto__", "success", "called __proto__"],
        ["constructor", "success", "called constructor"],
        ["toString", "success", "called toString"]
      ])
      expect(calls(log).map((c) => c.tool)).toEqual(["__proto__", "constructor", "toString"])
    }).pipe(Effect.scoped, setup))

  it.effect("a result nested 100,000 levels deep is described (it overflowed the stack: a defect); one outside the schema is a tool failure", () =>
    Effect.gen(function*() {
      const mcp = yield* McpTools.connect({ servers: [raw("deep-result", logFile()), { ...raw("bad-result", logFile()), prefix: "bad_" }] })
      const result = yield* Agent.run({ model, toolkit: mcp.toolkit, messages: [user(`big({"q":"a"}) and bad_big({"q":"b"})`)] })
      expect(result.steps[0]!.toolResults.map((r) => [r.name, r.outcome, r.content])).toEqual([
        ["big", "success", "[structured content nested deeper than 128 levels]"],
        ["bad_big", "failure", expect.stringContaining("ValidationError: Invalid MCP payload")]
      ])
    }).pipe(Effect.scoped, setup))

  it.effect("50,000 tools", () =>
    Effect.gen(function*() {
      const error = yield* connectError("many")
      expect(error).toMatchObject({ _tag: "McpServerError", server: "raw-many" })
      expect(error.message).toContain("LimitError")
    }).pipe(setup))

  it.effect("a 100 MB result is a tool failure (the message limit), not an out-of-memory", () =>
    Effect.gen(function*() {
      const log = logFile()
      const mcp = yield* McpTools.connect({ servers: [raw("big", log)] })
      const result = yield* Agent.run({ model, toolkit: mcp.toolkit, messages: [user("big")] })
      const [big] = result.steps[0]!.toolResults
      expect(big!.outcome).toBe("failure")
      expect(big!.content).toContain("LimitError")
    }).pipe(Effect.scoped, setup), 60_000)

  it("names the service refuses are mapped, reversibly through `names`", () => {
    expect(McpTools.modelName("notes.search")).toBe("notes_search")
    expect(McpTools.modelName("ok-name_1")).toBe("ok-name_1")
    const long = McpTools.modelName("x".repeat(100))
    expect(long).toMatch(/^x{55}_[0-9a-f]{8}$/)
  })
})
