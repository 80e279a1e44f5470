/**
 * Streaming replies as server-sent events of `chat.completion.chunk`s
 * (decision 1), and the stream faults that cut, stall or break them.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type Meta, type Reply, totalUsage } from "./chat.js"
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

const chunk = (meta: Meta, index: number, delta: Delta, finishReason: string | null = null) => ({
  id: meta.id,
  object: "chat.completion.chunk",
  created: meta.created,
  model: meta.model,
  choices: [{ index, delta, finish_reason: finishReason }]
})

const toolCallDeltas = (reply: Reply, size: number): ReadonlyArray<Delta> =>
  reply.toolCalls.flatMap((call, index) => [
    { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] },
    ...chunksOf(call.arguments, size).map((piece) => ({ tool_calls: [{ index, function: { arguments: piece } }] }))
  ])

/** The chunks of one choice: its role, its content or tool calls in pieces, its finish reason. */
const choiceChunks = (reply: Reply, index: number, meta: Meta, size: number): ReadonlyArray<unknown> => {
  const first = { role: "assistant", content: reply.content === null ? null : "" }
  const body = reply.content === null
    ? toolCallDeltas(reply, size)
    : chunksOf(reply.content, size).map((content) => ({ content }))
  return [chunk(meta, index, first), ...body.map((delta) => chunk(meta, index, delta)), chunk(meta, index, {}, reply.finishReason)]
}

/** Every event payload of the stream, the choices interleaved one chunk each in turn, ending with `[DONE]`. */
export const events = (replies: ReadonlyArray<Reply>, meta: Meta, options: StreamOptions): ReadonlyArray<string> => {
  const perChoice = replies.map((reply, index) => choiceChunks(reply, index, meta, options.chunkSize))
  const longest = Math.max(0, ...perChoice.map((c) => c.length))
  const chunks: Array<unknown> = Array.from({ length: longest }, (_, step) => perChoice.flatMap((c) => step < c.length ? [c[step]] : []))
    .flat()
  if (options.includeUsage) chunks.push({ ...chunk(meta, 0, {}), choices: [], usage: totalUsage(replies) })
  // With several choices the index is what tells their chunks apart, so minimal replies keep it.
  const keepIndex = replies.length > 1
  const shaped = options.minimal ? chunks.map((c) => Minimal.chunk(c as Readonly<Record<string, unknown>>, keepIndex)) : chunks
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
