import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Emulator from "../src/Emulator.js"
import { call, events } from "./utils.js"

const page = "http://localhost:5173"

interface RawOptions {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: unknown
}

/** A fetch with whatever headers a browser would send, `Origin` included. */
const raw = (path: string, options: RawOptions = {}) =>
  Effect.flatMap(Emulator.Emulator, (emulator) =>
    Effect.tryPromise(async () => {
      const response = await fetch(`${emulator.url}${path}`, {
        method: options.method ?? (options.body === undefined ? "GET" : "POST"),
        headers: options.headers ?? {},
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
      })
      return { status: response.status, headers: response.headers, text: await response.text() }
    }))

/** A browser's preflight for a JSON POST with a bearer key. */
const preflight = (origin: string, path = "/v1/chat/completions", extra: Record<string, string> = {}) =>
  raw(path, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "authorization,content-type",
      ...extra
    }
  })

const authorized = (origin: string) =>
  Effect.map(Emulator.Emulator, (emulator) => ({
    origin,
    authorization: `Bearer ${emulator.apiKey}`,
    "content-type": "application/json"
  }))

describe("CORS", () => {
  it.effect("answers a preflight from a loopback page without a key, and neither records nor numbers it", () =>
    Effect.gen(function*() {
      for (const origin of [page, "http://127.0.0.1:4000", "http://[::1]:8080"]) {
        const reply = yield* preflight(origin)
        expect(reply.status).toBe(204)
        expect(reply.headers.get("access-control-allow-origin")).toBe(origin)
        expect(reply.headers.get("access-control-allow-methods")).toBe("GET, POST, OPTIONS")
        expect(reply.headers.get("access-control-allow-headers")).toBe("authorization, content-type")
        expect(reply.headers.get("vary")).toBe("origin")
        expect(reply.headers.get("x-request-id")).toBeNull()
      }
      const emulator = yield* Emulator.Emulator
      expect(yield* emulator.requestCount).toBe(0)
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("allows extra request headers a client asks for, and Private Network Access", () =>
    Effect.gen(function*() {
      const reply = yield* preflight(page, "/v1/models", {
        "access-control-request-headers": "authorization, x-stainless-os",
        "access-control-request-private-network": "true"
      })
      expect(reply.status).toBe(204)
      expect(reply.headers.get("access-control-allow-headers")).toBe("authorization, content-type, x-stainless-os")
      expect(reply.headers.get("access-control-allow-private-network")).toBe("true")
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("refuses a preflight from another origin with 403 and no CORS headers", () =>
    Effect.gen(function*() {
      const reply = yield* preflight("https://evil.example")
      expect(reply.status).toBe(403)
      expect(reply.headers.get("access-control-allow-origin")).toBeNull()
      expect(JSON.parse(reply.text)).toMatchObject({ error: { code: "cors_origin_not_allowed" } })
      expect(JSON.parse(reply.text).error.message).toContain("https://evil.example")
      // "null" (a file:// page) and look-alike hosts are not loopback.
      expect((yield* preflight("null")).status).toBe(403)
      expect((yield* preflight("http://localhost.evil.example:80")).status).toBe(403)
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("sets the headers a page needs on JSON responses, errors and streams", () =>
    Effect.gen(function*() {
      const headers = yield* authorized(page)
      const models = yield* raw("/v1/models", { headers })
      expect(models.status).toBe(200)
      expect(models.headers.get("access-control-allow-origin")).toBe(page)
      expect(models.headers.get("access-control-expose-headers")).toBe(
        "x-request-id, retry-after, retry-after-ms, x-ratelimit-limit-requests, x-ratelimit-limit-tokens, " +
          "x-ratelimit-remaining-requests, x-ratelimit-remaining-tokens, x-ratelimit-reset-requests, " +
          "x-ratelimit-reset-tokens, openai-processing-ms"
      )
      expect(models.headers.get("vary")).toBe("origin")
      expect(models.headers.get("x-request-id")).toBe("req_000001")

      const unauthorized = yield* raw("/v1/models", { headers: { origin: page } })
      expect(unauthorized.status).toBe(401)
      expect(unauthorized.headers.get("access-control-allow-origin")).toBe(page)

      const stream = yield* raw("/v1/chat/completions", {
        headers,
        body: { model: Emulator.chatMiniModel, stream: true, messages: [{ role: "user", content: "Hi" }] }
      })
      expect(stream.status).toBe(200)
      expect(stream.headers.get("content-type")).toContain("text/event-stream")
      expect(stream.headers.get("access-control-allow-origin")).toBe(page)
      expect(stream.headers.get("access-control-expose-headers")).toContain("x-request-id")
      expect(events(stream.text).at(-1)).toBe("[DONE]")

      const file = yield* raw("/files/img_abc123_4x4.png", { headers: { origin: page } })
      expect(file.headers.get("access-control-allow-origin")).toBe(page)
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("sends no CORS headers without an Origin or to an origin not allowed", () =>
    Effect.gen(function*() {
      const plain = yield* call("/v1/models")
      expect(plain.status).toBe(200)
      expect(plain.headers.get("access-control-allow-origin")).toBeNull()
      const foreign = yield* raw("/v1/models", { headers: yield* authorized("https://evil.example") })
      expect(foreign.status).toBe(200)
      expect(foreign.headers.get("access-control-allow-origin")).toBeNull()
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("exposes Retry-After on injected faults, and a preflight uses up no fault", () =>
    Effect.gen(function*() {
      expect((yield* preflight(page)).status).toBe(204)
      const reply = yield* raw("/v1/chat/completions", {
        headers: yield* authorized(page),
        body: { model: Emulator.chatMiniModel, messages: [{ role: "user", content: "Hi" }] }
      })
      expect(reply.status).toBe(429)
      expect(reply.headers.get("access-control-allow-origin")).toBe(page)
      expect(reply.headers.get("retry-after-ms")).toBe("20")
      expect(reply.headers.get("access-control-expose-headers")).toContain("retry-after-ms")
    }).pipe(Effect.provide(Emulator.layer({ faults: { script: [{ _tag: "Status", status: 429, retryAfterMs: 20 }] } }))))

  it.effect("allows exactly the configured origins", () =>
    Effect.gen(function*() {
      expect((yield* preflight("https://app.example")).status).toBe(204)
      expect((yield* preflight("http://dev.example:3000")).status).toBe(204)
      expect((yield* preflight("http://dev.example:4000")).status).toBe(204)
      expect((yield* preflight("https://dev.example:3000")).status).toBe(403)
      expect((yield* preflight(page)).status).toBe(403)
    }).pipe(Effect.provide(Emulator.layer({ cors: { allowedOrigins: ["https://app.example", "http://dev.example:*"] } }))))

  it.effect("allows every origin with \"*\"", () =>
    Effect.gen(function*() {
      const reply = yield* preflight("https://anywhere.example")
      expect(reply.status).toBe(204)
      expect(reply.headers.get("access-control-allow-origin")).toBe("https://anywhere.example")
    }).pipe(Effect.provide(Emulator.layer({ cors: { allowedOrigins: "*" } }))))

  it.effect("can be turned off: OPTIONS is then an ordinary request", () =>
    Effect.gen(function*() {
      const reply = yield* preflight(page)
      expect(reply.status).toBe(401)
      expect(reply.headers.get("access-control-allow-origin")).toBeNull()
      expect((yield* raw("/v1/models", { method: "OPTIONS", headers: yield* authorized(page) })).status).toBe(404)
      const models = yield* raw("/v1/models", { headers: yield* authorized(page) })
      expect(models.headers.get("access-control-allow-origin")).toBeNull()
    }).pipe(Effect.provide(Emulator.layer({ cors: false }))))
})
