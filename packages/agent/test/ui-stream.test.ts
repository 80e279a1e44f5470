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
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
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

/** A service of our own: it streams what the test writes, and says when the exchange with it is closed. */
const manualService = async () => {
  let opened!: (response: Http.ServerResponse) => void
  const response = new Promise<Http.ServerResponse>((resolve) => (opened = resolve))
  let closed!: () => void
  const exchangeClosed = new Promise<void>((resolve) => (closed = resolve))
  const server = Http.createServer((request, res) => {
    request.resume()
    res.on("close", closed)
    res.writeHead(200, { "content-type": "text/event-stream" })
    opened(res)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const served = UiServer.toWebHandler(
    UiServer.agent({ model: "gpt-4o-mini", toolkit: Toolkit.make() }),
    Layer.merge(NodeSwitchboard.layer({ baseUrl, apiKey: "sk-test" }), UiServer.layerMemory())
  )
  return {
    ...served,
    response,
    exchangeClosed,
    close: async () => {
      await served.dispose()
      server.close()
    }
  }
}

const delta = (text: string, finish: string | null = null) =>
  `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":${
    JSON.stringify(text)
  }},"finish_reason":${JSON.stringify(finish)}}]}\n\n`

/** Reads until the text read so far includes `until`. */
const readUntil = async (reader: ReadableStreamDefaultReader<string>, seen: string, until: string) => {
  while (!seen.includes(until)) {
    const read = await reader.read()
    if (read.done) throw new Error(`the body ended before ${until}`)
    seen += read.value
  }
  return seen
}

describe("UiServer.agent disconnect while the model streams", () => {
  it("closes the exchange with the service", async () => {
    // The service sends one chunk and then nothing: only a client that goes away ends the exchange.
    const service = await manualService()
    const controller = new AbortController()
    const response = await service.handler(
      new Request("http://127.0.0.1/api/chat", { method: "POST", body: userBody("gone", "Hello"), signal: controller.signal })
    )
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    const read = readUntil(reader, "", "text-delta")
    ;(await service.response).write(delta("Once"))
    const seen = await read
    controller.abort()
    await service.exchangeClosed
    await service.close()
    expect(seen).toContain("\"delta\":\"Once\"")
  })

  it("a body cancelled by its reader closes the exchange too", async () => {
    const service = await manualService()
    const response = await service.handler(new Request("http://127.0.0.1/api/chat", { method: "POST", body: userBody("cancelled", "Hello") }))
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    const read = readUntil(reader, "", "text-delta")
    ;(await service.response).write(delta("Once"))
    await read
    await reader.cancel()
    await service.exchangeClosed
    await service.close()
  })
})

describe("UiServer.toWebHandler's body", () => {
  it("gives each part to the page as soon as it is made: the service sends the next only once the page has read it", async () => {
    const service = await manualService()
    const response = await service.handler(new Request("http://127.0.0.1/api/chat", { method: "POST", body: userBody("live", "Hello") }))
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    const read = readUntil(reader, "", "\"delta\":\"Once\"")
    const upstream = await service.response
    upstream.write(delta("Once"))
    let seen = await read
    upstream.write(delta(" upon"))
    seen = await readUntil(reader, seen, "\"delta\":\" upon\"")
    upstream.end(`${delta("", "stop")}data: [DONE]\n\n`)
    seen = await readUntil(reader, seen, "data: [DONE]")
    await service.close()
    expect(seen).toContain("\"type\":\"finish\"")
  })

  it("a read gets everything made since the reader's last read, in one chunk", async () => {
    const go = Deferred.makeUnsafe<void>()
    const made = Deferred.makeUnsafe<void>()
    const frame = (n: number) => new TextEncoder().encode(`data: ${n}\n\n`)
    // One frame; then, once the test says so, two more in chunks of their own while nobody reads.
    const body = Stream.make(frame(1)).pipe(
      Stream.concat(Stream.fromEffect(Deferred.await(go)).pipe(Stream.drain)),
      Stream.concat(Stream.make(frame(2), frame(3)).pipe(Stream.rechunk(1))),
      Stream.concat(Stream.fromEffect(Deferred.succeed(made, undefined)).pipe(Stream.drain))
    )
    const { dispose, handler } = UiServer.toWebHandler(Effect.succeed(HttpServerResponse.stream(body)), Layer.empty)
    const response = await handler(new Request("http://127.0.0.1/api/chat", { method: "POST" }))
    const reader = response.body!.getReader()
    const text = async () => new TextDecoder().decode((await reader.read()).value)
    expect(await text()).toBe("data: 1\n\n")
    await Effect.runPromise(Effect.andThen(Deferred.succeed(go, undefined), Deferred.await(made)))
    expect(await text()).toBe("data: 2\n\ndata: 3\n\n")
    expect((await reader.read()).done).toBe(true)
    await dispose()
  })

  it("keeps the request's scope open while the body is read, and closes it when the body ends or is cancelled", async () => {
    const closed: Array<string> = []
    const frames = Stream.make(new TextEncoder().encode("data: 1\n\n"), new TextEncoder().encode("data: 2\n\n")).pipe(Stream.rechunk(1))
    // `effect`'s web handler gives each request a scope; `toWebHandler`'s type leaves it out, hence the cast.
    const handlerOf = (name: string) =>
      Effect.flatMap(Effect.scope, (scope) =>
        Effect.as(
          Scope.addFinalizer(scope, Effect.sync(() => closed.push(name))),
          HttpServerResponse.stream(Stream.concat(frames, Stream.fromEffect(Effect.yieldNow).pipe(Stream.drain)))
        )) as unknown as Effect.Effect<HttpServerResponse.HttpServerResponse>
    const read = UiServer.toWebHandler(handlerOf("read"), Layer.empty)
    const reader = (await read.handler(new Request("http://127.0.0.1/api/chat", { method: "POST" }))).body!.getReader()
    await reader.read()
    expect(closed).toEqual([])
    while (!(await reader.read()).done);
    expect(closed).toEqual(["read"])
    const cancelled = UiServer.toWebHandler(handlerOf("cancelled"), Layer.empty)
    const other = (await cancelled.handler(new Request("http://127.0.0.1/api/chat", { method: "POST" }))).body!.getReader()
    await other.read()
    expect(closed).toEqual(["read"])
    await other.cancel()
    expect(closed).toEqual(["read", "cancelled"])
    await read.dispose()
    await cancelled.dispose()
  })
})
