/**
 * `UiServer.chat` (image2 replies as `file` parts), video progress as
 * `data-*` parts, plain SSE and text, the error text options, and a client
 * that goes away while the model is streaming: the exchange with the service
 * is closed (seen by a service of our own that records it).
 */
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as TaskPoller from "@switchboard/core/TaskPoller"
import { InvalidRequestError } from "@switchboard/core/SwitchboardError"
import * as Ai7 from "ai"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Agent, UiServer, UiStream } from "../src/index.js"

let runtime: ManagedRuntime.ManagedRuntime<Emulator.Emulator, unknown>
let emulator: Emulator.Emulator["Service"]

beforeAll(async () => {
  runtime = ManagedRuntime.make(Emulator.layer())
  emulator = await runtime.runPromise(Effect.service(Emulator.Emulator))
})
afterAll(() => runtime?.dispose())

const userBody = (id: string, text: string) =>
  JSON.stringify({ id, messages: [{ id: "m", role: "user", parts: [{ type: "text", text }] }], trigger: "submit-message" })

const collect = async <E>(stream: Stream.Stream<Uint8Array, E>) =>
  new TextDecoder().decode(Buffer.concat(await Effect.runPromise(Stream.runCollect(stream))))

describe("UiServer.chat", () => {
  it("streams a chat reply; image2's images come as file parts that useChat keeps", async () => {
    const { dispose, handler } = UiServer.toWebHandler(
      UiServer.chat({ model: "image2" }),
      NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey })
    )
    // The AI SDK's own transport parses the response.
    const transport = new Ai7.DefaultChatTransport({
      api: "http://127.0.0.1/api/chat",
      fetch: (input: string | URL | Request, init?: RequestInit) => handler(new Request(input, init))
    })
    const stream = await transport.sendMessages({
      chatId: "img",
      messages: [{ id: "m", role: "user", parts: [{ type: "text", text: "A red fox" }] }],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined
    })
    let message: Ai7.UIMessage | undefined
    for await (
      const snapshot of Ai7.readUIMessageStream({ stream })
    ) message = snapshot
    await dispose()
    const files = message!.parts.filter((part) => part.type === "file")
    expect(files).toHaveLength(1)
    expect(files[0]).toMatchObject({ type: "file", mediaType: "image/png" })
    expect((files[0] as { url: string }).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/img_\w+_1024x1024\.png$/)
    expect((message!.metadata as { usage: { totalTokens: number } }).usage.totalTokens).toBeGreaterThan(0)
  })
})

describe("UiServer.agent with a Toolkit.WithHandler", () => {
  it("needs no handlers in its layer", async () => {
    const Echo = Tool.make("echo", { parameters: Schema.Struct({ text: Schema.String }), success: Schema.String })
    const kit = Toolkit.make(Echo)
    const toolkit = await Effect.runPromise(kit.pipe(Effect.provide(kit.toLayer({ echo: ({ text }) => Effect.succeed(text) }))))
    const { dispose, handler } = UiServer.toWebHandler(
      UiServer.agent({ model: "gpt-4o-mini", toolkit }),
      Layer.merge(NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }), UiServer.layerMemory())
    )
    const response = await handler(new Request("http://127.0.0.1/api/chat", { method: "POST", body: userBody("kit", "Use echo") }))
    const text = await response.text()
    await dispose()
    expect(text).toContain("{\"type\":\"tool-output-available\",\"toolCallId\":")
    expect(text).toContain("\"finishReason\":\"stop\"")
  })
})

describe("UiStream", () => {
  it("writes video progress as data-video parts with the task id, without the service's reply body", async () => {
    const updates = Stream.make(
      TaskPoller.TaskUpdate.InProgress({ taskId: "task_1", status: "processing", progress: 40 }),
      TaskPoller.TaskUpdate.Failed({ taskId: "task_1", reason: "quota", body: "{\"secret\":\"x\"}" })
    )
    const text = await collect(UiStream.encode(UiStream.fromVideoProgress(updates, { taskId: "task_1" })))
    expect(text).toContain("data: {\"type\":\"data-video\",\"id\":\"task_1\",\"data\":{\"status\":\"processing\",\"progress\":40}}")
    expect(text).toContain("{\"type\":\"data-video\",\"id\":\"task_1\",\"data\":{\"status\":\"failed\"}}")
    expect(text).not.toContain("secret")
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true)
  })

  const events: ReadonlyArray<Agent.AgentEvent> = [
    { _tag: "TextDelta", step: 0, text: "Hel" },
    { _tag: "TextDelta", step: 0, text: "lo" }
  ]
  const failing = Stream.concat(Stream.fromIterable(events), Stream.fail(new InvalidRequestError({ field: "model", message: "sk-secret-key at http://user:pw@host" })))

  it("plain SSE: one named event per AgentEvent, and a generic error event", async () => {
    const text = await collect(UiStream.agentSse(failing))
    expect(text).toBe(
      "event: TextDelta\ndata: {\"_tag\":\"TextDelta\",\"step\":0,\"text\":\"Hel\"}\n\n" +
        "event: TextDelta\ndata: {\"_tag\":\"TextDelta\",\"step\":0,\"text\":\"lo\"}\n\n" +
        "event: error\ndata: {\"errorText\":\"The request failed.\"}\n\n"
    )
  })

  it("plain text: the deltas, then the error text", async () => {
    expect(await collect(UiStream.agentText(failing))).toBe("Hello\n[error] The request failed.\n")
  })

  it("the error text is the user's function of the typed error; a throwing one falls back to the generic text", async () => {
    const named = await collect(UiStream.encode(UiStream.fromAgent(failing, { errorText: (e) => (e as { _tag: string })._tag })))
    expect(named).toContain("data: {\"type\":\"error\",\"errorText\":\"InvalidRequestError\"}")
    const throwing = await collect(UiStream.encode(UiStream.fromAgent(failing, {
      errorText: () => {
        throw new Error("boom")
      }
    })))
    expect(throwing).toContain("data: {\"type\":\"error\",\"errorText\":\"The request failed.\"}")
    expect(`${named}${throwing}`).not.toContain("sk-secret")
  })
})

describe("UiServer.agent disconnect while the model streams", () => {
  it("closes the exchange with the service", async () => {
    // A service that sends one chunk and then nothing: only a client that goes away ends the exchange.
    let closed!: () => void
    const exchangeClosed = new Promise<void>((resolve) => (closed = resolve))
    const service = Http.createServer((request, response) => {
      request.resume()
      response.on("close", closed)
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write(
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Once\"},\"finish_reason\":null}]}\n\n"
      )
    })
    await new Promise<void>((resolve) => service.listen(0, "127.0.0.1", resolve))
    const baseUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`
    const { dispose, handler } = UiServer.toWebHandler(
      UiServer.agent({ model: "gpt-4o-mini", toolkit: Toolkit.make() }),
      Layer.merge(NodeSwitchboard.layer({ baseUrl, apiKey: "sk-test" }), UiServer.layerMemory())
    )
    const controller = new AbortController()
    const response = await handler(
      new Request("http://127.0.0.1/api/chat", { method: "POST", body: userBody("gone", "Hello"), signal: controller.signal })
    )
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    let seen = ""
    while (!seen.includes("text-delta")) seen += (await reader.read()).value ?? ""
    controller.abort()
    await exchangeClosed
    await dispose()
    service.close()
    expect(seen).toContain("\"delta\":\"Once\"")
  })
})
