import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as TestClock from "effect/testing/TestClock"
import * as Emulator from "../src/Emulator.js"
import { call, chat, chunks, errorOf, events, openStream } from "./utils.js"

const question = { messages: [{ role: "user", content: "Stream something long enough" }] }

const withFaults = (script: ReadonlyArray<Emulator.Fault>) => Effect.provide(Emulator.layer({ faults: { script } }))

describe("fault injection", () => {
  it.effect("answers scripted status faults in order, with retry headers", () =>
    Effect.gen(function*() {
      const first = yield* call("/v1/models")
      expect(first.status).toBe(503)
      expect(first.headers.get("retry-after")).toBe("2")
      expect(errorOf(first)).toEqual({ message: "Injected fault: 503", type: "server_error", param: null, code: "server_error" })
      const second = yield* call("/v1/models")
      expect(second.status).toBe(429)
      expect(second.headers.get("retry-after-ms")).toBe("150")
      expect(errorOf(second).type).toBe("rate_limit_error")
      expect((yield* call("/v1/models")).status).toBe(200)
      const emulator = yield* Emulator.Emulator
      expect(yield* emulator.requestCount).toBe(3)
    }).pipe(withFaults([{ _tag: "Status", status: 503, retryAfter: 2 }, { _tag: "Status", status: 429, retryAfterMs: 150 }])))

  it.effect("delays on the runtime's clock, then answers", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const fiber = yield* Effect.forkChild(call("/v1/models"))
      yield* emulator.awaitRequests(1)
      yield* TestClock.adjust("10 seconds")
      expect((yield* Fiber.join(fiber)).status).toBe(200)
    }).pipe(withFaults([{ _tag: "Delay", delay: "10 seconds" }])))

  it.effect("resets the connection before any response and still records the request", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const result = yield* Effect.result(call("/v1/models"))
      expect(Result.isFailure(result)).toBe(true)
      expect(yield* emulator.requests).toEqual([{ method: "GET", path: "/v1/models", body: null, authorized: true, requestId: "req_000001", fault: { _tag: "Reset" } }])
      yield* emulator.awaitOpenConnections(0)
      expect((yield* call("/v1/models")).status).toBe(200)
    }).pipe(withFaults([{ _tag: "Reset" }])))

  it.effect("cuts a stream after N events without finish_reason or [DONE] and closes the connection", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const reply = yield* chat({ ...question, stream: true })
      const all = events(reply.text)
      expect(all).toHaveLength(3)
      expect(all).not.toContain("[DONE]")
      expect(chunks(reply.text).every((c) => c.choices[0]!.finish_reason === null)).toBe(true)
      yield* emulator.awaitOpenConnections(0)
    }).pipe(withFaults([{ _tag: "CutStream", afterChunks: 3 }])))

  it.effect("stalls a stream after N events until the client disconnects", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const stream = yield* openStream(question)
      const text = yield* Effect.promise(() => stream.readEvents(2))
      expect(events(text)).toHaveLength(2)
      expect(yield* emulator.openConnections).toBe(1)
      stream.abort()
      yield* emulator.awaitOpenConnections(0)
      expect(yield* emulator.openConnections).toBe(0)
    }).pipe(withFaults([{ _tag: "StallStream", afterChunks: 2 }])))

  it.effect("closing the layer ends a stalled stream instead of waiting for the client", () =>
    Effect.gen(function*() {
      const stream = yield* Effect.gen(function*() {
        const stream = yield* openStream(question)
        yield* Effect.promise(() => stream.readEvents(1))
        return stream
      }).pipe(withFaults([{ _tag: "StallStream", afterChunks: 1 }]))
      const outcome = yield* Effect.promise(() => stream.readEvents(100).then(() => "ended", () => "failed"))
      expect(["ended", "failed"]).toContain(outcome)
    }))

  it.effect("sends an error event after N events", () =>
    Effect.gen(function*() {
      const reply = yield* chat({ ...question, stream: true })
      const all = events(reply.text)
      expect(all).toHaveLength(3)
      expect(JSON.parse(all[2]!)).toMatchObject({ error: { message: "upstream exploded" } })
      expect(all).not.toContain("[DONE]")
    }).pipe(withFaults([{ _tag: "ErrorEvent", afterChunks: 2, message: "upstream exploded" }])))

  it.effect("applies faults only to the given paths and can be changed at runtime", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ paths: ["/v1/embeddings"], script: [{ _tag: "Status", status: 500 }] })
      expect((yield* call("/v1/models")).status).toBe(200)
      const embedded = yield* call("/v1/embeddings", { body: { model: "text-embedding-3-small", input: "x" } })
      expect(embedded.status).toBe(500)
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 502 }] })
      expect((yield* call("/v1/models")).status).toBe(502)
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 502 }] })
      yield* emulator.reset
      expect((yield* call("/v1/models")).status).toBe(200)
    }).pipe(Effect.provide(Emulator.layer())))

  const randomRun = Effect.gen(function*() {
    const statuses: Array<number> = []
    for (let i = 0; i < 20; i++) statuses.push((yield* call("/v1/models")).status)
    return statuses
  })
  const random: Emulator.FaultOptions = {
    script: [{ _tag: "Status", status: 500 }],
    rate: 0.5,
    random: [{ _tag: "Status", status: 503 }, { _tag: "Status", status: 429 }],
    seed: 7
  }

  it.effect("faults a seeded random share of requests after the script, the same on every run", () =>
    Effect.gen(function*() {
      const first = yield* randomRun.pipe(Effect.provide(Emulator.layer({ faults: random })))
      const second = yield* randomRun.pipe(Effect.provide(Emulator.layer({ faults: random })))
      expect(first).toEqual(second)
      expect(first[0]).toBe(500)
      const rest = first.slice(1)
      expect(rest.filter((s) => s === 200).length).toBeGreaterThan(3)
      expect(rest.filter((s) => s === 503).length).toBeGreaterThan(0)
      expect(rest.filter((s) => s === 429).length).toBeGreaterThan(0)
      const other = yield* randomRun.pipe(Effect.provide(Emulator.layer({ faults: { ...random, seed: 8 } })))
      expect(other).not.toEqual(first)
    }))
})
