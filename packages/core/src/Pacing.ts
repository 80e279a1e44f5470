/**
 * Pacing from the rate limits (opt-in): what the latest replies said about
 * the remaining requests and tokens, shared by every fiber of a program, so
 * that a new call is held while the budget is spent, until its reset,
 * rather than sent into a 429. A hold never passes the call's own limit
 * (`timeout` for a JSON call, `streamTotalTimeout` for a stream): the call
 * then fails at once with a `TimeoutError` of phase `paced`, which is not
 * retried.
 *
 * `layer` keeps the budget in memory, for one process; `@switchboard/workflow`
 * keeps one in SQL for a fleet sharing a key. `docs/metadata-and-pacing.md`.
 *
 * @since 1.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ResponseMetadata from "./ResponseMetadata.js"

/**
 * Where a budget is kept. Every method is handed the caller's clock
 * (`nowMillis`), so that a budget shared by processes needs no clock of its
 * own.
 *
 * @since 1.1.0
 * @category models
 */
export interface Pacer {
  /**
   * Takes one request from the budget and gives 0, or leaves it and gives
   * the milliseconds to wait before asking again.
   */
  readonly reserve: (nowMillis: number) => Effect.Effect<number>
  /** What a reply's rate-limit headers said, as it arrived. */
  readonly record: (limits: ResponseMetadata.RateLimits, nowMillis: number) => Effect.Effect<void>
  /** A reserved request has its reply (recorded first) or failed without one. */
  readonly release: Effect.Effect<void>
}

/**
 * The pacer of the calls in scope; none (no pacing) unless a layer sets one.
 *
 * @since 1.1.0
 * @category references
 */
export const CurrentPacer: Context.Reference<Pacer | undefined> = Context.Reference<Pacer | undefined>(
  "@switchboard/core/Pacing/CurrentPacer",
  { defaultValue: () => undefined }
)

/**
 * How often a held call asks again when the budget is spent and no reset is
 * known yet (a new window began and its first reply is still on its way).
 *
 * @since 1.1.0
 * @category constants
 */
export const recheck: Duration.Duration = /* @__PURE__ */ Duration.millis(25)

/**
 * One limit's state: what is left and when it is whole again.
 *
 * @since 1.1.0
 * @category models
 */
export interface Bucket {
  limit: number | undefined
  remaining: number | undefined
  resetAt: number | undefined
}

/**
 * What a budget holds: requests, tokens, the requests sent without a reply
 * yet, and whether any reply came.
 *
 * @since 1.1.0
 * @category models
 */
export interface State {
  readonly requests: Bucket
  readonly tokens: Bucket
  inFlight: number
  heard: boolean
}

/**
 * A budget that knows nothing yet: every call goes until a reply says more.
 *
 * @since 1.1.0
 * @category constructors
 */
export const emptyState = (): State => ({
  requests: { limit: undefined, remaining: undefined, resetAt: undefined },
  tokens: { limit: undefined, remaining: undefined, resetAt: undefined },
  inFlight: 0,
  heard: false
})

/** Past its reset, a bucket is whole again (when its limit is known). */
const renew = (bucket: Bucket, now: number, inFlight: number) => {
  if (bucket.resetAt !== undefined && now >= bucket.resetAt) {
    bucket.remaining = bucket.limit === undefined ? undefined : Math.max(0, bucket.limit - inFlight)
    bucket.resetAt = undefined
  }
}

/** How long a call must wait for `bucket`: 0 when it may go. */
const waitFor = (bucket: Bucket, now: number, inFlight: number): number => {
  if (bucket.remaining === undefined || bucket.remaining > 0) return 0
  if (bucket.resetAt !== undefined) return Math.max(1, bucket.resetAt - now)
  // Spent, with no reset known: a reply in flight will say; with none in flight, ask the service.
  return inFlight > 0 ? Duration.toMillis(recheck) : 0
}

/**
 * `Pacer.reserve` over a state, pure but for the state it updates: a
 * request goes when neither its requests nor its tokens are spent, and
 * takes one request. Before any reply, one request goes and the others wait
 * for what its reply says (a burst at start would otherwise be sent blind).
 *
 * @since 1.1.0
 * @category state
 */
export const reserveIn = (state: State, now: number): number => {
  if (!state.heard && state.inFlight > 0) return Duration.toMillis(recheck)
  renew(state.requests, now, state.inFlight)
  renew(state.tokens, now, state.inFlight)
  const wait = Math.max(waitFor(state.requests, now, state.inFlight), waitFor(state.tokens, now, state.inFlight))
  if (wait > 0) return wait
  if (state.requests.remaining !== undefined) state.requests.remaining -= 1
  state.inFlight += 1
  return 0
}

/**
 * A reply's word on one limit; the other requests in flight are counted as
 * not yet seen by the service. Before the known reset, replies can arrive out
 * of order (one sent early in the window that ended, recorded after the new
 * window's): the lower count and the later reset win, so a late reply never
 * spends budget twice; past the reset, the reply's word is taken as it is.
 */
const update = (
  bucket: Bucket,
  limit: number | undefined,
  remaining: number | undefined,
  reset: Duration.Duration | undefined,
  now: number,
  unseen: number
) => {
  if (limit !== undefined) bucket.limit = limit
  if (remaining === undefined) return
  const said = Math.max(0, remaining - unseen)
  const resetAt = reset === undefined ? undefined : now + Duration.toMillis(reset)
  const known = bucket.resetAt
  if (known === undefined || now >= known) {
    bucket.remaining = said
    bucket.resetAt = resetAt
    return
  }
  bucket.remaining = bucket.remaining === undefined ? said : Math.min(bucket.remaining, said)
  bucket.resetAt = resetAt === undefined ? known : Math.max(known, resetAt)
}

/**
 * `Pacer.record` over a state.
 *
 * @since 1.1.0
 * @category state
 */
export const recordIn = (state: State, limits: ResponseMetadata.RateLimits, now: number): void => {
  state.heard = true
  const unseen = Math.max(0, state.inFlight - 1)
  update(state.requests, limits.limitRequests, limits.remainingRequests, limits.resetRequests, now, unseen)
  // Tokens are not reserved per call (a call's cost is known only from its reply).
  update(state.tokens, limits.limitTokens, limits.remainingTokens, limits.resetTokens, now, 0)
}

/**
 * `Pacer.release` over a state.
 *
 * @since 1.1.0
 * @category state
 */
export const releaseIn = (state: State): void => {
  state.inFlight = Math.max(0, state.inFlight - 1)
}

/**
 * A budget in this process's memory, shared by every fiber given it.
 *
 * @since 1.1.0
 * @category constructors
 */
export const makeMemory = (): Pacer => {
  const state = emptyState()
  return {
    reserve: (now) => Effect.sync(() => reserveIn(state, now)),
    record: (limits, now) => Effect.sync(() => recordIn(state, limits, now)),
    release: Effect.sync(() => releaseIn(state))
  }
}

/**
 * Paces every call of the program it is provided to, through one budget in
 * memory.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Pacing from "@switchboard/core/Pacing"
 * import * as Effect from "effect/Effect"
 *
 * // Then provide a platform's layer, e.g. NodeSwitchboard.layerConfig().
 * const program = Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] })
 * const paced = program.pipe(Effect.provide(Pacing.layer))
 * ```
 * @since 1.1.0
 * @category layers
 */
export const layer: Layer.Layer<never> = /* @__PURE__ */ Layer.effectContext(
  /* @__PURE__ */ Effect.sync(() => Context.make(CurrentPacer, makeMemory()))
)

/**
 * Paces every call of the program through `pacer` (a budget kept
 * elsewhere, e.g. `@switchboard/workflow`'s SQL one).
 *
 * @since 1.1.0
 * @category layers
 */
export const layerPacer = (pacer: Pacer): Layer.Layer<never> => Layer.succeedContext(Context.make(CurrentPacer, pacer))

/**
 * Paces the calls inside `effect` through `pacer`.
 *
 * @since 1.1.0
 * @category combinators
 */
export const withPacer = <A, E, R>(effect: Effect.Effect<A, E, R>, pacer: Pacer): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, CurrentPacer, pacer)
