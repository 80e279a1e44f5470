/**
 * `NodeHttpWire`'s own time limits. `Transport` hands every limit to the
 * wire, which keeps them with plain timers whatever the fiber's clock (a
 * `TestClock` drives them only over `HttpClientWire`: core's Transport.test.ts).
 * So these tests run on the live clock, with limits of a few hundred
 * milliseconds against an emulator that holds its reply back for an hour.
 */
import { describe, expect, it } from "@effect/vitest"
import { serve } from "@switchboard/test-support/Hostile"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Zlib from "node:zlib"
import { Chat, HttpWire, type Protocol } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { NodeHttpWire } from "../src/index.js"
import { emulated, eventually, waitUntil } from "./fixtures.js"
import { against } from "./hostile.js"

const hello = {
  model: Emulator.chatModel,
  messages: [{ role: "user", content: "Tell me about wires" }]
} satisfies Protocol.ChatRequest

describe("NodeHttpWire on the live clock", () => {
  it.live("a reply slower than the request timeout fails with a request TimeoutError and closes the connection", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Delay", delay: "1 hour" }] })
      const error = yield* Effect.flip(Chat.create(hello))
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "request" })
      expect(error.message).toBe("POST /v1/chat/completions took longer than 300 ms")
      expect(yield* emulator.requestCount).toBe(1)
      expect(yield* waitUntil(emulator.openConnections, (n) => n === 0)).toBe(0)
    }).pipe(Effect.provide(emulated({ timeout: "300 millis", maxRetries: 0 }))))

  it.live("a stream that stalls mid-way fails with an idle TimeoutError after what arrived", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "StallStream", afterChunks: 2 }] })
      const seen: Array<Protocol.ChatCompletionChunk> = []
      const error = yield* Effect.flip(Stream.runForEach(Chat.stream(hello), (chunk) => Effect.sync(() => seen.push(chunk))))
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "idle" })
      expect(seen).toHaveLength(2)
      expect(yield* waitUntil(emulator.openConnections, (n) => n === 0)).toBe(0)
    }).pipe(Effect.provide(emulated({ streamIdleTimeout: "300 millis", maxRetries: 0 }))))

  it.live("a reader that stops holds the socket paused, then gets the whole body in order", () =>
    Effect.gen(function*() {
      const wire = yield* HttpWire.HttpWire
      const server = yield* bigBodyServer
      const response = yield* wire.open({ method: "GET", url: server.url, headers: {} })
      const pull = yield* Stream.toPull(response.body)
      const first = yield* pull
      // The reader stops: what the server managed to write meanwhile is bounded
      // by the wire's high-water mark and the socket buffers, far below the body.
      yield* Effect.sleep("300 millis")
      expect(server.written()).toBeLessThan(bodySize / 2)
      const rest = yield* Stream.runCollect(Stream.fromPull(Effect.succeed(pull)))
      const text = new TextDecoder().decode(Buffer.concat([...first, ...rest]))
      expect(text.length).toBe(bodySize)
      expect(text === expectedBody).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(NodeHttpWire.layer)))
})

/** 48 MiB of numbered lines: far more than the wire buffers and a socket holds. */
const bodySize = 48 * 1024 * 1024
const lines = bodySize / 16
const line = (i: number) => `${String(i).padStart(15, "0")}\n`
const expectedBody = Array.from({ length: lines }, (_, i) => line(i)).join("")

/** A loopback server writing `expectedBody` as fast as the socket takes it. */
const bigBodyServer = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly written: () => number; readonly server: Http.Server }>((resume) => {
    let written = 0
    const server = Http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" })
      let i = 0
      const write = () => {
        while (i < lines) {
          const batch = expectedBody.slice(i * 16, Math.min(lines, i + 4096) * 16)
          i = Math.min(lines, i + 4096)
          written += batch.length
          if (!res.write(batch)) return res.once("drain", write)
        }
        res.end()
      }
      write()
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}/big`, written: () => written, server }))
    })
  }),
  ({ server }) => Effect.callback<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
)

describe("NodeHttpWire's content-encoding lists", () => {
  // A decompressor per coding holds its window: a hostile list of thousands
  // would hold gigabytes. More than 5 (what undici's fetch takes) are refused.
  it.live("a list of more than 5 codings is a decode failure, none decoded; 5 are decoded", () =>
    Effect.scoped(Effect.gen(function*() {
      const wire = yield* HttpWire.HttpWire
      for (const count of [5, 6, 2000]) {
        const body = Array.from({ length: Math.min(count, 6) }).reduce<Buffer>((bytes) => Zlib.gzipSync(bytes), Buffer.from("{}"))
        const { url } = yield* serve((_request, response) => {
          response.writeHead(200, { "content-type": "application/json", "content-encoding": Array(count).fill("gzip").join(",") })
          response.end(body)
        })
        const result = yield* Effect.result(wire.text({ method: "GET", url, headers: {} }))
        if (count === 5) expect(result).toMatchObject({ _tag: "Success", success: { text: "{}" } })
        else expect(result, `${count} codings`).toMatchObject({ _tag: "Failure", failure: { reason: "decode" } })
      }
    }).pipe(Effect.provide(NodeHttpWire.layer))))
})

describe("NodeHttpWire after a stream's [DONE]", () => {
  const chunk = (content: string, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`
  const events = chunk("Hel") + chunk("lo", "stop") + "data: [DONE]\n\n"
  const streamed = Stream.runCollect(Stream.map(Chat.stream(hello), (c) => c.choices[0]?.delta.content))

  // Before, the end of the stream's scope aborted the exchange, so each
  // stream closed its connection and the next one opened another. Two, not
  // one: a stream ends inside the wire's read of its last bytes, so the next
  // one starts before undici has seen its predecessor's connection finish.
  it.live("streams read to their [DONE] keep their connections for the next ones", () => {
    const sockets = new Set<Net.Socket>()
    return against(
      (request, response) => {
        sockets.add(request.socket)
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end(events)
      },
      () =>
        Effect.gen(function*() {
          for (let i = 0; i < 6; i++) expect(yield* streamed).toEqual(["Hel", "lo"])
          expect(sockets.size).toBeLessThanOrEqual(2)
        })
    )
  })

  it.live("a rest after [DONE] longer than the wire drops closes the connection; the stream ended at [DONE]", () => {
    let written = 0
    return against(
      (_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.write(events)
        const comment = `: ${"x".repeat(16 * 1024)}\n`
        const more = () => {
          while (!response.destroyed && written < 64 * 1024 * 1024) {
            written += comment.length
            if (!response.write(comment)) return response.once("drain", more)
          }
        }
        more()
      },
      (server) =>
        Effect.gen(function*() {
          expect(yield* streamed).toEqual(["Hel", "lo"])
          yield* eventually(Effect.sync(server.openSockets), (n) => n === 0)
          expect(written).toBeLessThan(64 * 1024 * 1024)
        })
    )
  })

  it.live("a body that does not end after [DONE] is closed: the stream ended at [DONE]", () =>
    against(
      (_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.write(events)
      },
      (server) =>
        Effect.gen(function*() {
          expect(yield* streamed).toEqual(["Hel", "lo"])
          yield* eventually(Effect.sync(server.openSockets), (n) => n === 0)
        })
    ))
})
