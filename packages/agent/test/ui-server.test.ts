/**
 * `UiServer` through its web handler, against the emulator over real HTTP,
 * read by the AI SDK's own client (`DefaultChatTransport` and
 * `readUIMessageStream`) of `ai` 7 and of `ai` 6 (the oldest major that
 * knows `tool-approval-request`), and by raw frames.
 */
import * as Protocol from "@switchboard/core/Protocol"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as Ai6 from "ai6"
import * as Ai7 from "ai"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Agent, UiServer } from "../src/index.js"

const GetWeather = Tool.make("get_weather", {
  description: "Current weather in a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite })
})
const DeleteFile = Tool.make("delete_file", {
  description: "Deletes a file",
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.Struct({ deleted: Schema.String }),
  needsApproval: true
})
const Block = Tool.make("block", {
  description: "Never returns",
  parameters: Schema.Struct({ label: Schema.String }),
  success: Schema.String
})
const toolkit = Toolkit.make(GetWeather, DeleteFile, Block)
const model = "gpt-4o-mini"

let runtime: ManagedRuntime.ManagedRuntime<Emulator.Emulator, unknown>
let emulator: Emulator.Emulator["Service"]
let layer: Layer.Layer<never>
let handler: (request: Request) => Promise<Response>
let dispose: () => Promise<void>
const deleted: Array<string> = []
/** Every span the served runs start: a span ends when its fiber does. */
const spans: Array<Tracer.Span> = []
const recording = Tracer.make({
  span: (options) => {
    const span = new Tracer.NativeSpan(options)
    spans.push(span)
    return span
  }
})
let blockStarted: Deferred.Deferred<void>
let blockInterrupted: Deferred.Deferred<void>

beforeAll(async () => {
  runtime = ManagedRuntime.make(Emulator.layer())
  emulator = await runtime.runPromise(Effect.service(Emulator.Emulator))
  blockStarted = Deferred.makeUnsafe<void>()
  blockInterrupted = Deferred.makeUnsafe<void>()
  const handlers = toolkit.toLayer({
    get_weather: ({ city }) => Effect.succeed({ city, celsius: 21 }),
    delete_file: ({ path }) => Effect.sync(() => (deleted.push(path), { deleted: path })),
    block: () =>
      Deferred.succeed(blockStarted, undefined).pipe(
        Effect.andThen(Effect.never),
        Effect.onInterrupt(() => Deferred.succeed(blockInterrupted, undefined))
      )
  })
  const built = await runtime.runPromise(Effect.sync(() =>
    Layer.mergeAll(
      NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }),
      handlers,
      UiServer.layerMemory(),
      Layer.succeed(Tracer.Tracer, recording)
    )
  ))
  layer = built as unknown as Layer.Layer<never>
  ;({ handler, dispose } = UiServer.toWebHandler(UiServer.agent({ model, toolkit }), built))
})

afterAll(async () => {
  await dispose?.()
  await runtime?.dispose()
})

const post = (body: unknown, signal?: AbortSignal) =>
  handler(new Request("http://127.0.0.1/api/chat", { method: "POST", body: JSON.stringify(body), ...(signal ? { signal } : {}) }))

/** `fetch` for the AI SDK's transport: every request goes to the handler. */
const fetchHandler = (input: string | URL | Request, init?: RequestInit) => handler(new Request(input, init))

type Ai = typeof Ai7 | typeof Ai6

/** Sends `messages` as `useChat` does and returns the last snapshot of the assistant message. */
const send = async (ai: Ai, chatId: string, messages: ReadonlyArray<Ai7.UIMessage>) => {
  const transport = new (ai.DefaultChatTransport as typeof Ai7.DefaultChatTransport)({ api: "http://127.0.0.1/api/chat", fetch: fetchHandler })
  const stream = await transport.sendMessages({
    chatId,
    messages: messages as Array<Ai7.UIMessage>,
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: undefined
  })
  const last = messages.at(-1)
  let message: Ai7.UIMessage | undefined
  const errors: Array<unknown> = []
  for await (
    const snapshot of (ai.readUIMessageStream as typeof Ai7.readUIMessageStream)({
      stream: stream as ReadableStream<Ai7.UIMessageChunk>,
      ...(last?.role === "assistant" ? { message: last } : {}),
      onError: (error) => errors.push(error)
    })
  ) message = snapshot
  expect(errors).toEqual([])
  return message!
}

const user = (text: string): Ai7.UIMessage => ({ id: `u-${text.length}`, role: "user", parts: [{ type: "text", text }] })

type ToolPart = { type: string; toolCallId: string; state: string; input?: unknown; output?: unknown; approval?: { id: string } }
const toolParts = (message: Ai7.UIMessage) => message.parts.filter((p) => p.type.startsWith("tool-")) as unknown as Array<ToolPart>
const textOf = (message: Ai7.UIMessage) => message.parts.flatMap((p) => (p.type === "text" ? [p.text] : []))

const run = <A, E>(effect: Effect.Effect<A, E, never>) => runtime.runPromise(effect)
const agentRun = (messages: ReadonlyArray<Protocol.Message>) =>
  run(Effect.provide(Agent.run({ model, toolkit, messages }), layer as unknown as Layer.Layer<Agent.Requirements<typeof toolkit.tools>>))

/** What an `Agent` result says of its run: the text of each step, each call's name, input and output. */
const summary = (result: Agent.AgentResult) => ({
  texts: result.steps.flatMap((s) => (s.message.content ? [s.message.content] : [])),
  calls: result.steps.flatMap((s) =>
    s.toolResults.map((r) => ({ name: r.name, input: JSON.parse(r.arguments), output: JSON.parse(r.content) }))
  )
})
const summaryOf = (message: Ai7.UIMessage) => ({
  texts: textOf(message),
  calls: toolParts(message).map((p) => ({ name: p.type.slice(5), input: p.input, output: p.output }))
})

describe.each([["ai 7", Ai7 as Ai], ["ai 6", Ai6 as Ai]])("UiServer.agent read by %s", (_, ai) => {
  it("rebuilds the assistant message Agent.run returns", async () => {
    const text = "Use get_weather for Paris"
    const message = await send(ai, `chat-run-${_}`, [user(text)])
    const result = await agentRun([{ role: "user", content: text }])
    expect(summaryOf(message)).toEqual(summary(result))
    expect(message.parts.filter((p) => p.type === "step-start")).toHaveLength(2)
    expect(toolParts(message).map((p) => p.state)).toEqual(["output-available"])
    expect((message.metadata as { usage: { totalTokens: number } }).usage.totalTokens).toBe(result.usage.total_tokens)
  })

  it("pauses for an approval and resumes in the next request", async () => {
    const chatId = `chat-approve-${_}`
    const first = user("Use get_weather and delete_file")
    const before = deleted.length
    const paused = await send(ai, chatId, [first])
    const parts = toolParts(paused)
    expect(parts.map((p) => [p.type, p.state])).toEqual([
      ["tool-get_weather", "input-available"],
      ["tool-delete_file", "approval-requested"]
    ])
    expect(deleted.length).toBe(before)
    // What `addToolApprovalResponse({ id, approved: true })` does to the part.
    const approved: Ai7.UIMessage = {
      ...paused,
      parts: paused.parts.map((p) =>
        p.type === "tool-delete_file"
          ? { ...p, state: "approval-responded", approval: { id: (p as unknown as ToolPart).approval!.id, approved: true } } as typeof p
          : p
      )
    }
    // `readUIMessageStream` updates the message it continues in place: keep the request as sent.
    const final = await send(ai, chatId, [first, structuredClone(approved)])
    expect(deleted.length).toBe(before + 1)
    expect(toolParts(final).map((p) => p.state)).toEqual(["output-available", "output-available"])
    expect(textOf(final).at(-1)).toContain("delete_file →")

    const start = await agentRun([{ role: "user", content: "Use get_weather and delete_file" }])
    const resumed = await run(Effect.provide(
      Agent.resume({
        model,
        toolkit,
        transcript: start.transcript,
        usage: start.usage,
        decisions: Object.fromEntries(start.pending.map((p) => [p.approvalId, "approve" as const]))
      }),
      layer as unknown as Layer.Layer<Agent.Requirements<typeof toolkit.tools>>
    ))
    expect(summaryOf(final)).toEqual({
      texts: [...summary(start).texts, ...summary(resumed).texts],
      calls: summary(resumed).calls
    })
    // The resumed run carries the paused one's usage: one total for the conversation.
    expect((final.metadata as { usage: { totalTokens: number } }).usage.totalTokens).toBe(resumed.usage.total_tokens)

    // The same response again: nothing is pending any more.
    const served = deleted.length
    const again = await post({ id: chatId, messages: [first, approved], trigger: "submit-message" })
    expect(again.status).toBe(409)
    expect(deleted.length).toBe(served)
  })
})

/** The frames of a response, `data: ` stripped, `[DONE]` kept as is. */
const frames = async (response: Response) => {
  const text = await response.text()
  return text.split("\n\n").filter((f) => f !== "").map((f) => {
    expect(f.startsWith("data: ")).toBe(true)
    const data = f.slice(6)
    return data === "[DONE]" ? data : JSON.parse(data) as { type: string; id?: string }
  })
}

/** The order rules: `start` first, `finish` or `error` last before `[DONE]`, each text id opened before its deltas and closed after, steps balanced. */
const checkOrder = (all: ReadonlyArray<"[DONE]" | { type: string; id?: string }>) => {
  expect(all.at(-1)).toBe("[DONE]")
  const parts = all.slice(0, -1) as Array<{ type: string; id?: string }>
  expect(parts[0]!.type).toBe("start")
  expect(["finish", "error"]).toContain(parts.at(-1)!.type)
  const open = new Set<string>()
  const closed = new Set<string>()
  let step = false
  for (const part of parts) {
    if (part.type === "start-step") {
      expect(step).toBe(false)
      step = true
    }
    if (part.type === "finish-step") {
      expect(step).toBe(true)
      step = false
    }
    if (part.type === "text-start") {
      expect(open.has(part.id!) || closed.has(part.id!)).toBe(false)
      open.add(part.id!)
    }
    if (part.type === "text-delta") expect(open.has(part.id!)).toBe(true)
    if (part.type === "text-end") {
      expect(open.delete(part.id!)).toBe(true)
      closed.add(part.id!)
    }
    if (part.type.startsWith("text-") || part.type.startsWith("tool-")) expect(step).toBe(true)
  }
  expect(open.size).toBe(0)
  expect(step).toBe(false)
}

describe("UiServer.agent denial", () => {
  it("a denied call does not run; the model reads the user's reason", async () => {
    const chatId = "chat-deny"
    const first = user("Use delete_file")
    const paused = await send(Ai7, chatId, [first])
    const before = deleted.length
    const denied: Ai7.UIMessage = {
      ...paused,
      parts: paused.parts.map((p) =>
        p.type === "tool-delete_file"
          ? { ...p, state: "approval-responded", approval: { id: (p as unknown as ToolPart).approval!.id, approved: false, reason: "not that file" } } as typeof p
          : p
      )
    }
    const final = await send(Ai7, chatId, [first, structuredClone(denied)])
    expect(deleted.length).toBe(before)
    expect(toolParts(final).map((p) => p.state)).toEqual(["output-denied"])
    expect(textOf(final).at(-1)).toContain("not that file")
  })
})

describe("UiServer.agent chatKey", () => {
  it("keys paused runs by what chatKey makes of the request: another user's approval finds nothing", async () => {
    const keyed = UiServer.toWebHandler(
      UiServer.agent({ model, toolkit, chatKey: (chatId, request) => `${request.headers["x-user"] ?? ""}/${chatId}` }),
      layer as unknown as Layer.Layer<UiServer.ApprovalStore | Agent.Requirements<typeof toolkit.tools>>
    )
    const as = (userName: string, messages: ReadonlyArray<unknown>) =>
      keyed.handler(new Request("http://127.0.0.1/api/chat", {
        method: "POST",
        headers: { "x-user": userName },
        body: JSON.stringify({ id: "shared-id", messages })
      }))
    const first = user("Use delete_file")
    const text = await (await as("ann", [first])).text()
    const request = JSON.parse(text.split("\n\n").find((f) => f.includes("tool-approval-request"))!.slice(6)) as {
      approvalId: string
      toolCallId: string
    }
    const answer = {
      id: "a",
      role: "assistant",
      parts: [{ type: "step-start" }, {
        type: "tool-delete_file",
        toolCallId: request.toolCallId,
        state: "approval-responded",
        input: { path: "sample path" },
        approval: { id: request.approvalId, approved: true }
      }]
    }
    const before = deleted.length
    expect((await as("bob", [first, answer])).status).toBe(409)
    expect(deleted.length).toBe(before)
    expect((await as("ann", [first, answer])).status).toBe(200)
    await keyed.dispose()
  })
})

describe("UiServer.agent frames", () => {
  it("keeps the order rules and the protocol headers", async () => {
    const response = await post({ id: "frames", messages: [user("Use get_weather for Rome")], trigger: "submit-message" })
    expect(response.status).toBe(200)
    expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    const all = await frames(response)
    checkOrder(all)
    const finish = all.at(-2) as { type: string; finishReason: string; messageMetadata: { usage: { totalTokens: number } } }
    expect(finish.type).toBe("finish")
    expect(finish.finishReason).toBe("stop")
    expect(finish.messageMetadata.usage.totalTokens).toBeGreaterThan(0)
  })

  it("ends a failed run with a generic error part and [DONE]", async () => {
    await run(emulator.reset)
    await run(emulator.setFaults({ script: [{ _tag: "Status", status: 500 }, { _tag: "Status", status: 500 }, { _tag: "Status", status: 500 }, { _tag: "Status", status: 500 }] }))
    const response = await post({ id: "fails", messages: [user("Hello")], trigger: "submit-message" })
    const all = await frames(response)
    await run(emulator.reset)
    checkOrder(all)
    const error = all.at(-2) as { type: string; errorText: string }
    expect(error).toEqual({ type: "error", errorText: "The request failed." })
    expect(JSON.stringify(all)).not.toContain(emulator.apiKey)
    expect(JSON.stringify(all)).not.toContain("127.0.0.1")
  })
})

describe("UiServer.agent bad input", () => {
  const cases: ReadonlyArray<[string, unknown, string]> = [
    ["a wrong type", { id: "x", messages: [{ id: "m", role: "user", parts: [{ type: "text", text: 5 }] }] }, "messages[0].parts[0].text"],
    ["an unknown role", { id: "x", messages: [{ id: "m", role: "robot", parts: [] }] }, "messages[0].role"],
    ["no id", { messages: [] }, "id"],
    ["a tool result without its call", {
      id: "x",
      messages: [user("hi"), { id: "a", role: "assistant", parts: [{ type: "tool-get_weather", toolCallId: "c1", state: "output-available", output: { celsius: 1 } }] }]
    }, "messages[1].parts[0].input"],
    ["10,000 messages", { id: "x", messages: Array.from({ length: 10_000 }, () => user("hi")) }, "messages"],
    ["10 MB of history", { id: "x", messages: [user("a".repeat(10 * 1024 * 1024))] }, "body"]
  ]
  it.each(cases)("answers %s with 400 naming the field, before any call", async (_, body, field) => {
    await run(emulator.reset)
    const response = await post(body)
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { field: string } }).error.field).toBe(field)
    expect(await run(emulator.requests)).toEqual([])
  })

  it("says what the field got", async () => {
    const response = await post({ id: 7, messages: [] })
    expect(await response.json()).toEqual({ error: { field: "id", message: "expected a string, got 7" } })
  })

  it("answers an approval for a call that is not pending with 409, and runs nothing", async () => {
    await run(emulator.reset)
    const before = deleted.length
    const response = await post({
      id: "never-paused",
      messages: [user("Use delete_file"), {
        id: "a",
        role: "assistant",
        parts: [{ type: "step-start" }, {
          type: "tool-delete_file",
          toolCallId: "forged",
          state: "approval-responded",
          input: { path: "/etc/passwd" },
          approval: { id: "forged", approved: true }
        }]
      }]
    })
    expect(response.status).toBe(409)
    expect(((await response.json()) as { error: { field: string } }).error.field).toBe("messages[1].parts[1].approval")
    expect(deleted.length).toBe(before)
    expect(await run(emulator.requests)).toEqual([])
  })
})

describe("UiServer.agent disconnect", () => {
  it("a client that goes away interrupts the run: the tool stops and no further model call is made", async () => {
    await run(emulator.reset)
    const firstSpan = spans.length
    const controller = new AbortController()
    const response = await post({ id: "gone", messages: [user("Use block")], trigger: "submit-message" }, controller.signal)
    const reader = response.body!.getReader()
    await reader.read()
    await run(Deferred.await(blockStarted))
    controller.abort()
    await run(Deferred.await(blockInterrupted))
    // The run's own spans (invoke_agent, its chat call, the tool) all end: nothing of it keeps running.
    const ours = spans.slice(firstSpan)
    while (ours.some((span) => span.status._tag === "Started")) await new Promise((resolve) => setImmediate(resolve))
    expect(ours.map((span) => span.name)).toEqual(expect.arrayContaining(["invoke_agent", "execute_tool block"]))
    expect((await run(emulator.requests)).length).toBe(1)
  })
})
