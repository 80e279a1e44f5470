/**
 * Streaming replies as server-sent events of `chat.completion.chunk`s
 * (decision 1), and the stream faults that cut, stall or break them.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Meta, Reply } from "./chat.js"
import type { StreamFault } from "./faults.js"
import * as Minimal from "./minimal.js"
import { chunksOf } from "./text.js"

/**
 * @internal
 */
export interface StreamOptions {
  readonly chunkSize: number
  readonly includeUsage: boolean
  readonly minimal: boolean
}

type Delta = Readonly<Record<string, unknown>>

const chunk = (meta: Meta, delta: Delta, finishReason: string | null = null) => ({
  id: meta.id,
  object: "chat.completion.chunk",
  created: meta.created,
  model: meta.model,
  choices: [{ index: 0, delta, finish_reason: finishReason }]
})

const toolCallDeltas = (reply: Reply, size: number): ReadonlyArray<Delta> =>
  reply.toolCalls.flatMap((call, index) => [
    { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] },
    ...chunksOf(call.arguments, size).map((piece) => ({ tool_calls: [{ index, function: { arguments: piece } }] }))
  ])

/** Every event payload of the stream, in order, ending with `[DONE]`. */
export const events = (reply: Reply, meta: Meta, options: StreamOptions): ReadonlyArray<string> => {
  const first = { role: "assistant", content: reply.content === null ? null : "" }
  const body = reply.content === null
    ? toolCallDeltas(reply, options.chunkSize)
    : chunksOf(reply.content, options.chunkSize).map((content) => ({ content }))
  const chunks: Array<unknown> = [
    chunk(meta, first),
    ...body.map((delta) => chunk(meta, delta)),
    chunk(meta, {}, reply.finishReason)
  ]
  if (options.includeUsage) chunks.push({ ...chunk(meta, {}), choices: [], usage: reply.usage })
  const shaped = options.minimal ? chunks.map((c) => Minimal.chunk(c as Readonly<Record<string, unknown>>)) : chunks
  return [...shaped.map((c) => JSON.stringify(c)), "[DONE]"]
}

const encoder = new TextEncoder()
const encode = (data: string) => encoder.encode(`data: ${data}\n\n`)

/** What is sent once a stream fault strikes after its first `afterChunks` events. */
const tail = (fault: StreamFault): Stream.Stream<string> => {
  switch (fault._tag) {
    case "CutStream":
      return Stream.empty
    case "StallStream":
      // Held open until the client goes away, which interrupts this fiber.
      return Stream.never
    case "ErrorEvent":
      return Stream.make(JSON.stringify({ error: { message: fault.message, type: "server_error", param: null, code: null } }))
  }
}

/** The wire bytes, paced by `interval` on the runtime's clock (a TestClock in tests). */
export const sse = (
  payloads: ReadonlyArray<string>,
  fault: StreamFault | undefined,
  interval: Duration.Duration
): Stream.Stream<Uint8Array> => {
  const sent = fault ? payloads.slice(0, Math.max(0, fault.afterChunks)) : payloads
  const paced = Duration.toMillis(interval) > 0
    ? Stream.fromIterable(sent).pipe(Stream.zipWithIndex, Stream.mapEffect(([data, i]) =>
      i === 0 ? Effect.succeed(data) : Effect.as(Effect.sleep(interval), data)
    ))
    : Stream.fromIterable(sent)
  return Stream.concat(paced, fault ? tail(fault) : Stream.empty).pipe(Stream.map(encode))
}
