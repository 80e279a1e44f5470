/**
 * The floor: `undici.request` and `JSON.parse`, and for streams a hand-written
 * SSE line parser over the undici body. No validation beyond the checks every
 * client makes.
 */
import { Agent, request } from "undici"
import { apiKey, chatRequest, pacedStreamRequest, streamRequest } from "../lib/fixtures.js"
import type { ClientSpec, Measured } from "../lib/ipc.js"
import { baseUrl, checkCompletion, checkDeadline, checkStream, deadline, measure, measureOpenStreams, pool } from "./common.js"

type Spec<W extends ClientSpec["workload"]> = Extract<ClientSpec, { workload: W }>

const headers = {
  "content-type": "application/json",
  accept: "application/json",
  authorization: `Bearer ${apiKey}`
}

export const chat = async (spec: Spec<"chat">): Promise<Measured> => {
  const dispatcher = new Agent()
  const url = `${baseUrl(spec.port)}/v1/chat/completions`
  const until = deadline(spec.timeLimitMs)
  const once = async () => {
    const response = await request(url, { method: "POST", headers, body: JSON.stringify(chatRequest), dispatcher })
    const text = await response.body.text()
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`)
    checkCompletion(JSON.parse(text))
  }
  await pool(spec.warmup, spec.concurrency, until, once)
  const measured = await measure(spec.count, () => pool(spec.count, spec.concurrency, until, once))
  await dispatcher.close()
  return measured
}

/** Reads one SSE stream: `data:` lines, `JSON.parse`, until `[DONE]`. */
const readStream = async (port: number, chunks: number, until: number, paced = false) => {
  const response = await request(`${baseUrl(port)}/v1/chat/completions`, {
    method: "POST",
    headers: { ...headers, accept: "text/event-stream" },
    body: JSON.stringify(paced ? pacedStreamRequest(chunks) : streamRequest(chunks))
  })
  if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${(await response.body.text()).slice(0, 200)}`)
  const decoder = new TextDecoder()
  let pending = ""
  let seen = 0
  let finished = false
  let done = false
  for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
    checkDeadline(until, "a stream")
    const part = decoder.decode(bytes, { stream: true })
    const text = pending === "" ? part : pending + part
    let start = 0
    let end: number
    while ((end = text.indexOf("\n", start)) !== -1) {
      const line = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end)
      start = end + 1
      if (!line.startsWith("data:")) continue
      const data = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5)
      if (data === "[DONE]") {
        done = true
        continue
      }
      const chunk = JSON.parse(data) as { choices: Array<{ finish_reason?: string | null }> }
      seen++
      finished = typeof chunk.choices[0]?.finish_reason === "string"
    }
    pending = text.slice(start)
  }
  if (!done) throw new Error("stream ended without [DONE]")
  checkStream(seen, chunks, finished)
}

export const stream = async (spec: Spec<"stream">): Promise<Measured> => {
  const until = deadline(spec.timeLimitMs)
  for (let i = 0; i < spec.warmupStreams; i++) await readStream(spec.port, Math.min(spec.chunks, 2_000), until)
  return measure(spec.streams * spec.chunks, async () => {
    for (let i = 0; i < spec.streams; i++) await readStream(spec.port, spec.chunks, until)
  })
}

export const concurrentStreams = async (spec: Spec<"concurrent-streams">): Promise<Measured> => {
  const until = deadline(spec.timeLimitMs)
  const all = (streams: number) =>
    Promise.all(Array.from({ length: streams }, () => readStream(spec.port, spec.chunks, until, true))).then(() => {})
  await all(spec.warmupStreams)
  return measureOpenStreams(spec.streams * spec.chunks, () => all(spec.streams))
}
