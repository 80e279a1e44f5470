/**
 * The official client (`openai`, v6, over Node's built-in fetch), with
 * `maxRetries: 0`, called as its documentation shows.
 */
import OpenAI from "openai"
import { apiKey, chatRequest, pacedStreamRequest, streamRequest } from "../lib/fixtures.js"
import type { ClientSpec, Measured } from "../lib/ipc.js"
import { baseUrl, checkCompletion, checkDeadline, checkStream, deadline, measure, measureOpenStreams, pool } from "./common.js"

type Spec<W extends ClientSpec["workload"]> = Extract<ClientSpec, { workload: W }>

const client = (port: number) => new OpenAI({ apiKey, baseURL: `${baseUrl(port)}/v1`, maxRetries: 0 })

export const chat = async (spec: Spec<"chat">): Promise<Measured> => {
  const openai = client(spec.port)
  const until = deadline(spec.timeLimitMs)
  const once = async () => checkCompletion(await openai.chat.completions.create(chatRequest))
  await pool(spec.warmup, spec.concurrency, until, once)
  return measure(spec.count, () => pool(spec.count, spec.concurrency, until, once))
}

const readStream = async (openai: OpenAI, chunks: number, until: number, paced = false) => {
  const stream = await openai.chat.completions.create(paced ? pacedStreamRequest(chunks) : streamRequest(chunks))
  let seen = 0
  let finished = false
  for await (const chunk of stream) {
    seen++
    finished = typeof chunk.choices[0]?.finish_reason === "string"
    if ((seen & 1023) === 0) checkDeadline(until, "a stream")
  }
  checkStream(seen, chunks, finished)
}

export const stream = async (spec: Spec<"stream">): Promise<Measured> => {
  const openai = client(spec.port)
  const until = deadline(spec.timeLimitMs)
  for (let i = 0; i < spec.warmupStreams; i++) await readStream(openai, Math.min(spec.chunks, 2_000), until)
  return measure(spec.streams * spec.chunks, async () => {
    for (let i = 0; i < spec.streams; i++) await readStream(openai, spec.chunks, until)
  })
}

export const concurrentStreams = async (spec: Spec<"concurrent-streams">): Promise<Measured> => {
  const openai = client(spec.port)
  const until = deadline(spec.timeLimitMs)
  const all = (streams: number) =>
    Promise.all(Array.from({ length: streams }, () => readStream(openai, spec.chunks, until, true))).then(() => {})
  await all(spec.warmupStreams)
  return measureOpenStreams(spec.streams * spec.chunks, () => all(spec.streams))
}
