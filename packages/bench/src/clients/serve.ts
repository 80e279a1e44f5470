/**
 * Serving overhead. A streamed agent answer of `chunks` text chunks (a
 * toolkit without tools, so one model call): `Agent.stream` drained, against
 * the same run served by `UiServer.agent` through its web handler (the body
 * `useChat` posts decoded, the events written as SSE frames, the `Response`
 * body read to its end); and the frames alone (`UiStream.encodeAgent`, what
 * the handler sends, drained without a `Response`). Units are the text
 * parts, the same in all.
 */
import { Agent, UiServer, UiStream } from "@switchboard/agent"
import { NodeSwitchboard } from "@switchboard/node"
import * as Toolkit from "effect/ai/Toolkit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import { apiKey, chatModel } from "../lib/fixtures.js"
import type { ClientSpec, Measured } from "../lib/ipc.js"
import { baseUrl, measure } from "./common.js"

type Spec = Extract<ClientSpec, { workload: "serve" }>

const toolkit = Toolkit.make()
const text = "Tell me a long story."

export const run = async (spec: Spec): Promise<Measured> => {
  const layer = Layer.merge(NodeSwitchboard.layer({ baseUrl: baseUrl(spec.port), apiKey }), UiServer.layerMemory())
  const runtime = ManagedRuntime.make(layer)
  const web = UiServer.toWebHandler(UiServer.agent({ model: chatModel, toolkit, maxTokens: spec.chunks }), layer)
  const alone = (chunks: number) =>
    runtime.runPromise(Stream.runFold(
      Agent.stream({ model: chatModel, toolkit, maxTokens: chunks, messages: [{ role: "user", content: text }] }),
      () => 0,
      (n, event) => event._tag === "TextDelta" ? n + 1 : n
    ))
  const body = JSON.stringify({ id: "bench", messages: [{ id: "m", role: "user", parts: [{ type: "text", text }] }] })
  const served = async () => {
    const response = await web.handler(new Request("http://127.0.0.1/api/chat", { method: "POST", body }))
    const reader = response.body!.getReader()
    let bytes = 0
    for (let read = await reader.read(); !read.done; read = await reader.read()) bytes += read.value.byteLength
    return bytes
  }
  const encoded = () =>
    runtime.runPromise(Stream.runFold(
      UiStream.encodeAgent(Agent.stream({ model: chatModel, toolkit, maxTokens: spec.chunks, messages: [{ role: "user", content: text }] })),
      () => 0,
      (n, bytes) => n + bytes.byteLength
    ))
  const once = spec.mode === "served" ? served : spec.mode === "encoded" ? encoded : () => alone(spec.chunks)
  try {
    for (let i = 0; i < spec.warmupStreams; i++) await once()
    return await measure(spec.streams * spec.chunks, async () => {
      for (let i = 0; i < spec.streams; i++) await once()
    })
  } finally {
    await web.dispose()
    await runtime.dispose()
  }
}

