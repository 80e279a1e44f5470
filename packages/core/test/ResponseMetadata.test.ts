import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Pacing from "../src/Pacing.js"
import * as ResponseMetadata from "../src/ResponseMetadata.js"

const millis = (d: Duration.Duration | undefined) => (d === undefined ? undefined : Duration.toMillis(d))

describe("rate-limit headers", () => {
  it("reads resets as the services write them", () => {
    expect(millis(ResponseMetadata.parseReset("12ms"))).toBe(12)
    expect(millis(ResponseMetadata.parseReset("1m30s"))).toBe(90_000)
    expect(millis(ResponseMetadata.parseReset("6m0s"))).toBe(360_000)
    expect(millis(ResponseMetadata.parseReset("2m59.56s"))).toBe(179_560)
    expect(millis(ResponseMetadata.parseReset("1h"))).toBe(3_600_000)
    expect(millis(ResponseMetadata.parseReset("20"))).toBe(20_000)
    expect(millis(ResponseMetadata.parseReset(" 0.5 "))).toBe(500)
  })

  it("garbage, negative, duplicated and absurd values are absent, never a failure", () => {
    for (const text of ["", "soon", "-1s", "-5", "1s2", "ms", "1d", "NaN", "Infinity", "1e3", "1s, 1s", "87600h", "1700000000"]) {
      expect(ResponseMetadata.parseReset(text)).toBeUndefined()
    }
    const limits = ResponseMetadata.rateLimitsOf({
      "x-ratelimit-limit-requests": "100, 100",
      "x-ratelimit-remaining-requests": "-3",
      "x-ratelimit-remaining-tokens": "12.5",
      "x-ratelimit-limit-tokens": "9999999999999999999",
      "x-ratelimit-reset-requests": "87600h",
      "x-ratelimit-reset-tokens": "1m"
    })
    expect(limits).toEqual({ resetTokens: Duration.minutes(1) })
    expect(ResponseMetadata.processingTimeOf({ "openai-processing-ms": "abc" })).toBeUndefined()
    expect(millis(ResponseMetadata.processingTimeOf({ "openai-processing-ms": "42" }))).toBe(42)
  })
})

describe("the pacing budget", () => {
  const limits = (remaining: number, resetMillis: number): ResponseMetadata.RateLimits => ({
    limitRequests: 3,
    remainingRequests: remaining,
    resetRequests: Duration.millis(resetMillis)
  })

  it("goes while requests remain, holds until the reset once spent, then renews from the limit", () => {
    const state = Pacing.emptyState()
    expect(Pacing.reserveIn(state, 0)).toBe(0)
    Pacing.recordIn(state, limits(1, 1000), 10)
    Pacing.releaseIn(state)
    expect(Pacing.reserveIn(state, 20)).toBe(0)
    expect(Pacing.reserveIn(state, 20)).toBe(990)
    Pacing.releaseIn(state)
    expect(Pacing.reserveIn(state, 1010)).toBe(0)
    expect(state.requests.remaining).toBe(2)
  })

  it("counts the other requests in flight as not yet seen by the service", () => {
    const state = Pacing.emptyState()
    state.heard = true
    for (let i = 0; i < 3; i++) expect(Pacing.reserveIn(state, 0)).toBe(0)
    Pacing.recordIn(state, limits(2, 1000), 5)
    expect(state.requests.remaining).toBe(0)
  })

  it("a late reply from before the window's newer replies never raises what they left", () => {
    const state = Pacing.emptyState()
    state.heard = true
    expect(Pacing.reserveIn(state, 0)).toBe(0)
    expect(Pacing.reserveIn(state, 0)).toBe(0)
    // The newer reply arrives first: the window is spent until 1,005.
    Pacing.recordIn(state, limits(0, 1000), 5)
    Pacing.releaseIn(state)
    // The older one, sent early in the window that ended, says 2 were left.
    Pacing.recordIn(state, limits(2, 10), 6)
    Pacing.releaseIn(state)
    expect(state.requests.remaining).toBe(0)
    expect(Pacing.reserveIn(state, 7)).toBe(998)
    // Past the reset, a reply's word is taken as it is again.
    expect(Pacing.reserveIn(state, 1005)).toBe(0)
    Pacing.recordIn(state, limits(2, 1000), 1010)
    expect(state.requests.remaining).toBe(2)
  })

  it("before any reply one request goes, the others wait for what it says", () => {
    const state = Pacing.emptyState()
    expect(Pacing.reserveIn(state, 0)).toBe(0)
    expect(Pacing.reserveIn(state, 0)).toBe(Duration.toMillis(Pacing.recheck))
    Pacing.recordIn(state, {}, 5)
    Pacing.releaseIn(state)
    // A service that sends no rate-limit headers: every call goes.
    expect(Pacing.reserveIn(state, 5)).toBe(0)
    expect(Pacing.reserveIn(state, 5)).toBe(0)
  })

  it("spent with no reset known: waits for a reply in flight, asks the service when none is", () => {
    const state = Pacing.emptyState()
    state.heard = true
    state.requests.remaining = 0
    expect(Pacing.reserveIn(state, 0)).toBe(0)
    state.requests.remaining = 0
    expect(Pacing.reserveIn(state, 0)).toBe(Duration.toMillis(Pacing.recheck))
  })
})
