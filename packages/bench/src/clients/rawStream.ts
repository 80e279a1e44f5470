/**
 * The floor of any client built on `effect/Stream`: the raw SSE parser's own
 * work (`undici.request`, the hand-written `data:` line parser, `JSON.parse`,
 * nothing validated, no span, no bounds), each network read's chunks handed
 * on as one batch of a `Stream` and consumed as the Switchboard clients are,
 * with `Stream.runForEach` or `Stream.runFold`. What it costs over the raw
 * parser is `Stream`'s own per read and per chunk; what Switchboard costs over
 * it is the SDK's.
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { request } from "undici"
import { apiKey, streamRequest } from "../lib/fixtures.js"
import type { ClientSpec, Measured } from "../lib/ipc.js"
import { baseUrl, checkDeadline, deadline, measure } from "./common.js"
import { counted } from "./counted.js"

type Spec<W extends ClientSpec["workload"]> = Extract<ClientSpec, { workload: W }>

interface Chunk {
  readonly choices: ReadonlyArray<{ readonly finish_reason?: string | null }>
}

const headers = { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${apiKey}` }

/** One stream's chunks: one batch per network read that completed at least one event, as the raw parser splits them. */
const chunksOf = (port: number, chunks: number, until: number): Stream.Stream<Chunk, Error> =>
  Stream.unwrap(Effect.promise(async () => {
    const response = await request(`${baseUrl(port)}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify(streamRequest(chunks))
    })
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}`)
    const reads = (response.body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
    const decoder = new TextDecoder()
    let pending = ""
    let done = false
    const parse = (bytes: Uint8Array): Array<Chunk> => {
      const batch: Array<Chunk> = []
      const part = decoder.decode(bytes, { stream: true })
      const text = pending === "" ? part : pending + part
      let start = 0
      let end: number
      while ((end = text.indexOf("\n", start)) !== -1) {
        const line = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end)
        start = end + 1
        if (!line.startsWith("data:")) continue
        const data = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5)
        if (data === "[DONE]") done = true
        else batch.push(JSON.parse(data) as Chunk)
      }
      pending = text.slice(start)
      return batch
    }
    const pull: Effect.Effect<Arr.NonEmptyReadonlyArray<Chunk>, Error | Cause.Done> = Effect.flatMap(
      Effect.promise(() => reads.next()),
      (read) => {
        if (read.done) return done ? Cause.done() : Effect.fail(new Error("stream ended without [DONE]"))
        checkDeadline(until, "a stream")
        const batch = parse(read.value)
        return batch.length > 0 ? Effect.succeed(batch as unknown as Arr.NonEmptyReadonlyArray<Chunk>) : pull
      }
    )
    return Stream.fromPull(Effect.succeed(pull))
  }))

export const stream = async (spec: Spec<"stream">): Promise<Measured> => {
  const until = deadline(spec.timeLimitMs)
  const fold = spec.client === "raw-stream-fold"
  const run = (streams: number, chunks: number) =>
    Effect.runPromise(Effect.forEach(Array.from({ length: streams }), () => counted(chunksOf(spec.port, chunks, until), chunks, fold), { discard: true }))
  await run(spec.warmupStreams, Math.min(spec.chunks, 2_000))
  return measure(spec.streams * spec.chunks, () => run(spec.streams, spec.chunks))
}
