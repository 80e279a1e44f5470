/**
 * The time and size limits of `HttpWire.Limits`, written once for every wire
 * (`HttpClientWire` here, `NodeHttpWire`, `BrowserHttpWire`), so the three
 * keep one contract, which `@switchboard/test-support/WireConformance` checks:
 *
 * - `TextBody`: a whole body read up to its limit, counted decoded: a 2xx
 *   past `maxBytes` (or a plain one whose `content-length` says so) is
 *   `too-large`; any other status's body is cut at `maxErrorBytes`;
 * - `StreamDeadlines`: the first-byte (until `commit`), total and idle
 *   limits of an opened exchange, as timers for the whole exchange, never
 *   one per read;
 * - `Timers`: what the limits run on: the runtime's timers
 *   (`systemTimers`), or the fiber's `Clock` (`clockTimers`), which a
 *   `TestClock` moves.
 *
 * No Effect in the per-byte paths: a wire calls these from its own reads.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpWire from "./HttpWire.js"
import { joinBytes } from "./internal/bytes.js"

// As `URL` in SwitchboardConfig: present everywhere the SDK runs, untyped in core's build.
declare const TextDecoder: new() => {
  readonly decode: (bytes?: Uint8Array) => string
}
declare const setTimeout: (f: () => void, millis: number) => unknown
declare const clearTimeout: (timer: unknown) => void

/**
 * Where limits get the time and set their timers.
 *
 * @since 0.2.0
 * @category timers
 */
export interface Timers {
  readonly now: () => number
  /** Calls `f` once `millis` have passed; the function returned cancels it. */
  readonly set: (millis: number, f: () => void) => () => void
}

/**
 * The runtime's own timers and `Date.now`: what the Node and browser wires
 * use (no fiber per timer).
 *
 * @since 0.2.0
 * @category timers
 */
export const systemTimers: Timers = {
  now: () => Date.now(),
  set: (millis, f) => {
    const timer = setTimeout(f, millis)
    return () => clearTimeout(timer)
  }
}

/**
 * Timers on the fiber's `Clock`: each one a fiber sleeping on it, so a
 * `TestClock` drives the limits (what `HttpClientWire` uses).
 *
 * @since 0.2.0
 * @category timers
 */
export const clockTimers: Effect.Effect<Timers> = Effect.withFiber((fiber) => {
  const clock = fiber.getRef(Clock.Clock)
  const fork = Effect.runForkWith(fiber.context)
  return Effect.succeed({
    now: () => clock.currentTimeMillisUnsafe(),
    set: (millis, f) => {
      const timer = fork(Effect.andThen(Effect.sleep(millis), Effect.sync(f)))
      return () => timer.interruptUnsafe()
    }
  })
})

/**
 * Whether an HTTP status is a success (2xx).
 *
 * @since 0.2.0
 * @category guards
 */
export const isSuccess = (status: number): boolean => status >= 200 && status < 300

/**
 * The `too-large` failure.
 *
 * @since 0.2.0
 * @category errors
 */
export const tooLarge = (): HttpWire.WireError => new HttpWire.WireError({ reason: "too-large" })

const utf8 = new TextDecoder()

/**
 * What `TextBody.add` says after a read: read on; the 2xx body is past
 * `maxBytes` (fail with `too-large`, abort); or an error body has all the
 * wire reads of it (stop reading, abort, answer with `text()`).
 *
 * @since 0.2.0
 * @category text
 */
export type Verdict = "more" | "too-large" | "full"

/**
 * A whole body, read up to its limit: `maxBytes` for a 2xx (none when
 * undefined), `HttpWire.maxErrorBytes` for any other status. Bytes are
 * counted decoded (after `content-encoding`), so a small body that inflates
 * to gigabytes ends at the limit; the text holds at most the limit.
 *
 * @since 0.2.0
 * @category text
 */
export class TextBody {
  /**
   * Whether the status is a 2xx.
   *
   * @since 0.2.0
   */
  readonly success: boolean
  /**
   * The most bytes kept: `maxBytes` for a 2xx, `HttpWire.maxErrorBytes` otherwise.
   *
   * @since 0.2.0
   */
  readonly limit: number
  /**
   * A plain (uncoded) 2xx whose `content-length` is past `maxBytes`: fail
   * with `too-large` before reading. A coded body's length is its coded
   * size, not what the limit counts.
   *
   * @since 0.2.0
   */
  readonly declaredTooLarge: boolean
  // The reads kept, decoded once by `text()`: a decoder per body cost more
  // than the decoding (about 2 µs a call, docs/decisions.md).
  private parts: Array<Uint8Array> = []
  private size = 0

  constructor(head: HttpWire.Head, maxBytes: number | undefined) {
    this.success = isSuccess(head.status)
    this.limit = this.success ? maxBytes ?? Infinity : HttpWire.maxErrorBytes
    this.declaredTooLarge = this.success && head.headers["content-encoding"] === undefined &&
      Number(head.headers["content-length"]) > this.limit
  }

  /**
   * Counts and keeps (up to the limit) one read of decoded bytes.
   *
   * @since 0.2.0
   */
  add(bytes: Uint8Array): Verdict {
    const room = this.limit - this.size
    this.size += bytes.length
    if (room > 0) this.parts.push(room >= bytes.length ? bytes : bytes.subarray(0, room))
    if (this.size <= this.limit) return "more"
    return this.success ? "too-large" : "full"
  }

  /**
   * The text read, at most the limit.
   *
   * @since 0.2.0
   */
  text(): string {
    const parts = this.parts
    this.parts = []
    return parts.length === 0 ? "" : utf8.decode(joinBytes(parts))
  }

  /**
   * A body that does not decode: a 2xx fails with `error`; any other status
   * keeps its status, with what did decode (`undefined`: answer with `text()`).
   *
   * @since 0.2.0
   */
  undecodable(error: HttpWire.WireError): HttpWire.WireError | undefined {
    return this.success ? error : undefined
  }
}

/**
 * A stream limit that ran out.
 *
 * @since 0.2.0
 * @category streams
 */
export type StreamLimit = "first-byte" | "idle" | "total"

/**
 * The time limits of an opened exchange, from the moment it is made (the
 * request leaving) to `end`:
 * - `total`: one timer to the body's end;
 * - `first-byte`: one timer until `commit` (the caller has its first element);
 * - `idle`: after the first read handed to the body's reader, the longest
 *   the reader may wait with nothing arriving. One timer, which on firing
 *   checks the time of the last activity and sets itself again for what is
 *   left; a reader that is slow itself (not waiting) never trips it.
 *
 * The wire tells it what happens (`waiting`, `arrived`, `delivered`) and
 * gets `onTimeout` once, after which no timer is left.
 *
 * @since 0.2.0
 * @category streams
 */
export class StreamDeadlines {
  private cancelTotal: (() => void) | undefined
  private cancelFirstByte: (() => void) | undefined
  private cancelIdle: (() => void) | undefined
  private ended = false
  private reads = 0
  private isWaiting = false
  private lastActivity = 0
  private readonly idleMillis: number | undefined

  constructor(
    limits: HttpWire.Limits | undefined,
    private readonly timers: Timers,
    private readonly onTimeout: (limit: StreamLimit) => void
  ) {
    this.idleMillis = limits?.idleMillis
    if (limits?.totalMillis !== undefined) this.cancelTotal = timers.set(limits.totalMillis, () => this.fire("total"))
    if (limits?.firstByteMillis !== undefined) {
      this.cancelFirstByte = timers.set(limits.firstByteMillis, () => this.fire("first-byte"))
    }
  }

  /**
   * The caller has its first element: the first-byte limit stops.
   *
   * @since 0.2.0
   */
  readonly commit = (): void => {
    this.cancelFirstByte?.()
    this.cancelFirstByte = undefined
  }

  /**
   * The body's reader starts waiting for bytes (`true`), or stops (`false`).
   *
   * @since 0.2.0
   */
  waiting(isWaiting: boolean): void {
    this.isWaiting = isWaiting
    if (!isWaiting || this.ended || this.reads === 0 || this.idleMillis === undefined) return
    this.lastActivity = this.timers.now()
    this.cancelIdle ??= this.timers.set(this.idleMillis, this.checkIdle)
  }

  /**
   * Bytes arrived from the server.
   *
   * @since 0.2.0
   */
  arrived(): void {
    if (this.cancelIdle !== undefined) this.lastActivity = this.timers.now()
  }

  /**
   * A read was handed to the body's reader: the idle limit applies from now on.
   *
   * @since 0.2.0
   */
  delivered(): void {
    this.reads++
    if (this.cancelIdle !== undefined) this.lastActivity = this.timers.now()
  }

  /**
   * The exchange is over (its body ended, it failed or was aborted): no limit fires any more.
   *
   * @since 0.2.0
   */
  end(): void {
    this.ended = true
    this.cancelTotal?.()
    this.cancelFirstByte?.()
    this.cancelIdle?.()
    this.cancelTotal = this.cancelFirstByte = this.cancelIdle = undefined
  }

  /**
   * A limit passed: ends the exchange and reports which.
   *
   * @since 0.2.0
   */
  private fire(limit: StreamLimit) {
    if (this.ended) return
    this.end()
    this.onTimeout(limit)
  }

  private readonly checkIdle = () => {
    this.cancelIdle = undefined
    if (this.ended) return
    const idle = this.idleMillis!
    const silent = this.timers.now() - this.lastActivity
    if (this.isWaiting && silent >= idle) return this.fire("idle")
    // A reader busy with earlier data is not a silent server: wait a whole period again.
    this.cancelIdle = this.timers.set(this.isWaiting ? idle - silent : idle, this.checkIdle)
  }
}
