import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as TestClock from "effect/testing/TestClock"
import * as CommandLine from "../src/CommandLine.js"
import * as Emulator from "../src/Emulator.js"
import { call, chat } from "./utils.js"

const rateHeaders = (headers: Headers) =>
  Object.fromEntries([...headers.entries()].filter(([name]) => name.startsWith("x-ratelimit-") || name === "openai-processing-ms"))

describe("rate-limit and processing-time headers", () => {
  it.effect("every reply advertises a budget that never runs out, the same for the same request", () =>
    Effect.gen(function*() {
      const first = yield* chat({ messages: [{ role: "user", content: "hi" }] })
      const again = yield* chat({ messages: [{ role: "user", content: "hi" }] })
      expect(rateHeaders(first.headers)).toEqual(rateHeaders(again.headers))
      expect(rateHeaders(first.headers)).toMatchObject({
        "x-ratelimit-limit-requests": "10000",
        "x-ratelimit-remaining-requests": "9999",
        "x-ratelimit-reset-requests": "6ms",
        "x-ratelimit-limit-tokens": "1000000"
      })
      expect(Number(first.headers.get("openai-processing-ms"))).toBeGreaterThan(0)
      expect((yield* call("/v1/models")).headers.get("x-ratelimit-remaining-requests")).toBe("9999")
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("limit mode: the window runs out, a 429 says when it resets, a new window opens after it", () =>
    Effect.gen(function*() {
      const models = () => call("/v1/models")
      const first = yield* models()
      expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("1")
      expect(first.headers.get("x-ratelimit-reset-requests")).toBe("10s")
      yield* TestClock.adjust("2500 millis")
      const second = yield* models()
      expect(second.headers.get("x-ratelimit-remaining-requests")).toBe("0")
      expect(second.headers.get("x-ratelimit-reset-requests")).toBe("7.5s")
      const refused = yield* models()
      expect(refused.status).toBe(429)
      expect(refused.headers.get("retry-after")).toBe("8")
      expect(refused.headers.get("retry-after-ms")).toBe("7500")
      expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0")
      yield* TestClock.adjust("7500 millis")
      const renewed = yield* models()
      expect(renewed.status).toBe(200)
      expect(renewed.headers.get("x-ratelimit-remaining-requests")).toBe("1")
    }).pipe(Effect.provide(Emulator.layer({ rateLimit: { requests: 2, window: "10 seconds" } }))))

  it("--rate-limit reads requests per window, and says what is wrong", () => {
    expect(CommandLine.parseRateLimit("20/1s")).toEqual(Result.succeed({ requests: 20, window: 1000 }))
    expect(CommandLine.parseRateLimit("100/1m:tokens=5000")).toEqual(Result.succeed({ requests: 100, window: 60_000, tokens: 5000 }))
    expect(Result.isFailure(CommandLine.parseRateLimit("20"))).toBe(true)
    expect(Result.isFailure(CommandLine.parseRateLimit("20/0s"))).toBe(true)
    expect(Result.isFailure(CommandLine.parseRateLimit("20/1s:burst=2"))).toBe(true)
  })
})
