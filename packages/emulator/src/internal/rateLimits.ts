/**
 * The rate-limit and processing-time headers of every reply
 * (`docs/emulator.md`, Rate limits), and the limit mode, where a fixed
 * window of requests runs out and the next request gets a 429 until it
 * resets. Deterministic: a request's cost is its body's length, the time is
 * the emulator's clock (a test's `TestClock`).
 *
 * @internal
 */

/**
 * @internal
 */
export interface Config {
  /** Requests per window. */
  readonly requests: number
  /** Tokens per window (each request costs `tokensOf` its body). */
  readonly tokens: number
  /** The window, in milliseconds, from its first request. */
  readonly windowMillis: number
}

/** What the emulator advertises outside limit mode: a budget that never runs out. */
export const unlimited = { requests: 10_000, tokens: 1_000_000, perMillis: 60_000 } as const

/** A request's cost in tokens: a quarter of its body's bytes, at least 1. */
export const tokensOf = (bodyBytes: number): number => Math.max(1, Math.ceil(bodyBytes / 4))

/** A duration as the services write resets: `12ms`, `1.5s`, `1m30s`, `1h0m0s`. */
export const formatReset = (millis: number): string => {
  const ms = Math.max(0, Math.ceil(millis))
  if (ms < 1000) return `${ms}ms`
  const hours = Math.floor(ms / 3_600_000)
  const minutes = Math.floor((ms % 3_600_000) / 60_000)
  const seconds = (ms % 60_000) / 1000
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`
  if (minutes > 0) return `${minutes}m${seconds}s`
  return `${seconds}s`
}

/**
 * What one request is told: its headers, and in limit mode when it is
 * refused, the milliseconds until the window resets.
 *
 * @internal
 */
export interface Verdict {
  readonly headers: Record<string, string>
  readonly refusedFor: number | undefined
}

/**
 * @internal
 */
export interface Limiter {
  readonly admit: (nowMillis: number, bodyBytes: number) => Verdict
  readonly reset: () => void
}

const headers = (
  limits: { readonly requests: number; readonly tokens: number },
  remaining: { readonly requests: number; readonly tokens: number },
  reset: { readonly requests: number; readonly tokens: number },
  cost: number
): Record<string, string> => ({
  "x-ratelimit-limit-requests": String(limits.requests),
  "x-ratelimit-limit-tokens": String(limits.tokens),
  "x-ratelimit-remaining-requests": String(remaining.requests),
  "x-ratelimit-remaining-tokens": String(remaining.tokens),
  "x-ratelimit-reset-requests": formatReset(reset.requests),
  "x-ratelimit-reset-tokens": formatReset(reset.tokens),
  // What the service "spent": one millisecond per 10 tokens of the request, at least 1.
  "openai-processing-ms": String(Math.max(1, Math.ceil(cost / 10)))
})

/** Outside limit mode: a full budget less this request, replenished at the advertised rate. */
const open = (bodyBytes: number): Verdict => {
  const cost = tokensOf(bodyBytes)
  return {
    headers: headers(
      unlimited,
      { requests: unlimited.requests - 1, tokens: unlimited.tokens - cost },
      {
        requests: unlimited.perMillis / unlimited.requests,
        tokens: (cost * unlimited.perMillis) / unlimited.tokens
      },
      cost
    ),
    refusedFor: undefined
  }
}

/**
 * @internal
 */
export const make = (config: Config | undefined): Limiter => {
  if (config === undefined) return { admit: (_now, bytes) => open(bytes), reset: () => {} }
  let windowEnd = -Infinity
  let requests = 0
  let tokens = 0
  return {
    admit: (now, bytes) => {
      if (now >= windowEnd) {
        windowEnd = now + config.windowMillis
        requests = 0
        tokens = 0
      }
      const cost = tokensOf(bytes)
      const left = windowEnd - now
      const refused = requests >= config.requests || tokens >= config.tokens
      if (!refused) {
        requests += 1
        tokens += cost
      }
      return {
        headers: headers(
          config,
          { requests: config.requests - requests, tokens: Math.max(0, config.tokens - tokens) },
          { requests: left, tokens: left },
          cost
        ),
        refusedFor: refused ? left : undefined
      }
    },
    reset: () => {
      windowEnd = -Infinity
    }
  }
}
