/**
 * What the emulator holds on to (issue 26): nothing of a request it refused
 * for its key, a bounded number of recorded requests, a bounded body, a
 * bounded number of video tasks.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as Emulator from "../src/Emulator.js"
import { call, chat, chunks, completion, errorOf } from "./utils.js"

const big = (bytes: number) => ({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x".repeat(bytes) }] })

/**
 * A POST announcing `length` bytes of which only the first KiB is sent: the
 * status arrives only if the server answers without waiting for the rest.
 */
const partialUpload = (length: number, key: string) =>
  Effect.flatMap(Emulator.Emulator, (emulator) =>
    Effect.callback<{ readonly status: number; readonly body: string }>((resume) => {
      const request = Http.request(`${emulator.url}/v1/chat/completions`, {
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "content-length": String(length), authorization: `Bearer ${key}` }
      }, (response) => {
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (body += chunk))
        response.on("end", () => {
          request.destroy()
          resume(Effect.succeed({ status: response.statusCode ?? 0, body }))
        })
      })
      request.on("error", () => undefined)
      request.write("x".repeat(1024))
      return Effect.sync(() => request.destroy())
    }))

describe("memory", () => {
  it.effect("records no request refused for its key, and still counts it", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      for (let i = 0; i < 3; i++) {
        expect((yield* call("/v1/chat/completions", { key: "sk-wrong", body: big(64 * 1024) })).status).toBe(401)
      }
      yield* chat({ messages: [{ role: "user", content: "hi" }] })
      const recorded = yield* emulator.requests
      expect(recorded.map((r) => [r.path, r.authorized])).toEqual([["/v1/chat/completions", true]])
      expect(yield* emulator.requestCount).toBe(4)
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("refuses a request with a wrong key before its body has arrived", () =>
    Effect.gen(function*() {
      const reply = yield* partialUpload(1024 * 1024, "sk-wrong")
      expect(reply.status).toBe(401)
      expect(JSON.parse(reply.body)).toMatchObject({ error: { code: "invalid_api_key" } })
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("refuses a body announced larger than the limit with 413 before reading it", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const reply = yield* partialUpload(4096, emulator.apiKey)
      expect(reply.status).toBe(413)
      expect(JSON.parse(reply.body)).toEqual({
        error: {
          message: "The request body is larger than the limit of 2048 bytes.",
          type: "invalid_request_error",
          param: null,
          code: "request_too_large"
        }
      })
      expect(yield* emulator.requests).toEqual([])
    }).pipe(Effect.provide(Emulator.layer({ limits: { bodyBytes: 2048 } }))))

  it.effect("refuses a chunked body that grows past the limit with 413", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const body = JSON.stringify(big(4096))
      const reply = yield* Effect.promise(() =>
        fetch(`${emulator.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${emulator.apiKey}` },
          // A stream has no known length: it is sent chunked.
          body: new Blob([body]).stream(),
          duplex: "half"
        } as RequestInit).then(async (r) => ({ status: r.status, json: await r.json() as unknown }))
      )
      expect(reply.status).toBe(413)
      expect(reply.json).toMatchObject({ error: { code: "request_too_large" } })
      const fits = yield* chat({ messages: [{ role: "user", content: "hi" }] })
      expect(fits.status).toBe(200)
    }).pipe(Effect.provide(Emulator.layer({ limits: { bodyBytes: 2048 } }))))

  it.effect("keeps only the latest recorded requests", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      for (let i = 1; i <= 5; i++) yield* chat({ messages: [{ role: "user", content: `message ${i}` }] })
      const recorded = yield* emulator.requests
      expect(recorded.map((r) => (r.body as ReturnType<typeof big>).messages[0]!.content)).toEqual(["message 3", "message 4", "message 5"])
      expect(yield* emulator.requestCount).toBe(5)
    }).pipe(Effect.provide(Emulator.layer({ limits: { recordedRequests: 3 } }))))

  it.effect("keeps recorded bodies within a byte budget, the latest always kept", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      for (let i = 0; i < 4; i++) yield* chat(big(1000))
      expect((yield* emulator.requests).length).toBe(2)
      yield* chat(big(5000))
      expect((yield* emulator.requests).length).toBe(1)
    }).pipe(Effect.provide(Emulator.layer({ limits: { recordedBytes: 2500 } }))))

  it.effect("forgets the oldest video tasks past the limit", () =>
    Effect.gen(function*() {
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        const reply = yield* call("/v1/chat/completions", { body: { model: "video-1", messages: [{ role: "user", content: `clip ${i}` }] } })
        ids.push((reply.json as { id: string }).id)
      }
      const poll = (id: string) => call("/v1/chat/task/status", { body: { task_id: id } })
      const oldest = yield* poll(ids[0]!)
      expect(oldest.status).toBe(404)
      expect(errorOf(oldest).code).toBe("task_not_found")
      expect((yield* poll(ids[1]!)).status).toBe(200)
      expect((yield* poll(ids[2]!)).status).toBe(200)
    }).pipe(Effect.provide(Emulator.layer({ limits: { videoTasks: 2 } }))))

  it.effect("answers n: 128 choices of a long prompt within 1 MiB of text, streamed or not", () =>
    Effect.gen(function*() {
      // Each choice echoes the prompt: 128 copies of 2 MB, 256 MB, were built and sent whole.
      const body = { n: 128, messages: [{ role: "user", content: "word ".repeat(400_000) }] }
      const whole = yield* chat(body)
      expect(whole.status).toBe(200)
      const choices = completion(whole).choices
      expect(choices).toHaveLength(128)
      expect(choices.every((c) => c.finish_reason === "length" && c.message.content!.length <= 8192)).toBe(true)
      const streamed = yield* chat({ ...body, stream: true })
      expect(streamed.status).toBe(200)
      const text = chunks(streamed.text).flatMap((c) => c.choices.map((choice) => choice.delta.content ?? "")).join("")
      expect(text.length).toBeLessThanOrEqual(1024 * 1024)
    }).pipe(Effect.provide(Emulator.layer({ stream: { chunkSize: 1024 } }))))
})
