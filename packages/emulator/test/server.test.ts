import { describe, expect, it } from "@effect/vitest"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Emulator from "../src/Emulator.js"
import * as Protocol from "@switchboard/core/Protocol"
import { call, chat, decode, errorOf, oneShot } from "./utils.js"

const run = Effect.provide(Emulator.layer())

describe("server", () => {
  it.effect("lists the models", () =>
    Effect.gen(function*() {
      const reply = yield* call("/v1/models")
      expect(reply.status).toBe(200)
      const list = decode(Protocol.ModelList, reply)
      expect(list).toMatchObject({ object: "list" })
      expect(list.data.map((m) => m.id)).toEqual([
        "gpt-4o-mini",
        "gpt-4o",
        "image2",
        "video-1",
        "text-embedding-3-small",
        "omni-moderation-latest"
      ])
      expect(list.data[0]).toEqual({ id: "gpt-4o-mini", object: "model", created: 1_700_000_000, owned_by: "switchboard-emulator" })
      const one = yield* call("/v1/models/gpt-4o")
      expect(decode(Protocol.Model, one).id).toBe("gpt-4o")
    }).pipe(run))

  it.effect("rejects a missing or wrong key with 401 and never echoes it", () =>
    Effect.gen(function*() {
      const missing = yield* call("/v1/models", { key: null })
      expect(missing.status).toBe(401)
      expect(missing.json).toEqual({
        error: { message: "Invalid or missing API key", type: "authentication_error", param: null, code: "invalid_api_key" }
      })
      const wrong = yield* call("/v1/chat/completions", { key: "sk-wrong-secret-123", body: { model: "gpt-4o" } })
      expect(wrong.status).toBe(401)
      expect(wrong.text).not.toContain("sk-wrong-secret-123")
      expect([...wrong.headers.values()].join(" ")).not.toContain("sk-wrong-secret-123")
      const emulator = yield* Emulator.Emulator
      expect(yield* emulator.requests).toEqual([])
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(run))

  it.effect("accepts a custom key", () =>
    Effect.gen(function*() {
      expect((yield* call("/v1/models", { key: "sk-custom" })).status).toBe(200)
      expect((yield* call("/v1/models", { key: "sk-emulator" })).status).toBe(401)
    }).pipe(Effect.provide(Emulator.layer({ apiKey: "sk-custom" }))))

  it.effect("numbers every response with x-request-id", () =>
    Effect.gen(function*() {
      const first = yield* call("/v1/models")
      const second = yield* call("/v1/nope")
      const third = yield* call("/v1/models", { key: null })
      expect([first, second, third].map((r) => r.headers.get("x-request-id"))).toEqual(["req_000001", "req_000002", "req_000003"])
    }).pipe(run))

  it.effect("answers an unknown path with 404 and invalid JSON with 400", () =>
    Effect.gen(function*() {
      const unknown = yield* call("/v1/nope", { body: {} })
      expect(unknown.status).toBe(404)
      expect(errorOf(unknown).message).toBe("Invalid URL (POST /v1/nope)")
      const invalid = yield* call("/v1/chat/completions", { rawBody: "{not json" })
      expect(invalid.status).toBe(400)
      expect(errorOf(invalid).code).toBe("invalid_json")
    }).pipe(run))

  it.effect("records every request in order and clears them on reset", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* chat({ messages: [{ role: "user", content: "hi" }] })
      yield* call("/v1/models")
      expect(yield* emulator.requests).toEqual([
        { method: "POST", path: "/v1/chat/completions", body: { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, authorized: true, requestId: "req_000001" },
        { method: "GET", path: "/v1/models", body: null, authorized: true, requestId: "req_000002" }
      ])
      yield* emulator.reset
      expect(yield* emulator.requestCount).toBe(0)
    }).pipe(run))

  it.effect("awaitRequests resolves once enough requests arrived", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const waiting = yield* Effect.forkChild(emulator.awaitRequests(2))
      yield* call("/v1/models")
      expect(waiting.pollUnsafe()).toBeUndefined()
      yield* call("/v1/models")
      yield* Fiber.join(waiting)
      yield* emulator.awaitRequests(1)
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(run))

  it.effect("openConnections returns to 0 once a connection closes", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      expect(yield* emulator.openConnections).toBe(0)
      expect(yield* oneShot("/v1/models")).toBe(200)
      yield* emulator.awaitOpenConnections(0)
      expect(yield* emulator.openConnections).toBe(0)
      expect(yield* emulator.requestCount).toBe(1)
    }).pipe(run))

  it.effect("fails with a ServeError when the port is taken", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const port = Number(new URL(emulator.url).port)
      const second = yield* Effect.result(Layer.build(Emulator.layer({ port })))
      expect(Result.isFailure(second) && second.failure._tag).toBe("ServeError")
    }).pipe(run))
})

describe("serve", () => {
  it.effect("logs one line with the /v1 address and serves until interrupted", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const logged = yield* Deferred.make<string>()
      const current = yield* Console.Console
      const console: Console.Console = {
        ...current,
        log: (...args) => {
          lines.push(args.join(" "))
          Deferred.doneUnsafe(logged, Exit.succeed(args.join(" ")))
        }
      }
      const fiber = yield* Effect.forkChild(Effect.provideService(Emulator.serve({ apiKey: "sk-cli" }), Console.Console, console))
      const line = yield* Deferred.await(logged)
      expect(line).toMatch(/^Switchboard emulator listening on http:\/\/127\.0\.0\.1:\d+\/v1$/)
      const url = line.replace("Switchboard emulator listening on ", "")
      const status = yield* Effect.promise(() => fetch(`${url}/models`, { headers: { authorization: "Bearer sk-cli" } }).then((r) => r.status))
      expect(status).toBe(200)
      yield* Fiber.interrupt(fiber)
      expect(lines).toHaveLength(1)
    }))
})

describe("one layer value provided twice", () => {
  // Effect 4 memoizes a layer by reference across nested provides: each
  // provide of the same value must still start a server of its own.
  it.effect("inside itself, it is another emulator on another port", () =>
    Effect.gen(function*() {
      const layer = Emulator.layer()
      const [outer, inner] = yield* Effect.gen(function*() {
        const outer = yield* Emulator.Emulator
        return [outer, yield* Effect.provide(Effect.service(Emulator.Emulator), layer)] as const
      }).pipe(Effect.provide(layer))
      expect(inner.url).not.toBe(outer.url)
    }))
})
