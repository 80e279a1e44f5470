/**
 * `WireLimits`, the limits every wire shares, on a scripted clock: what the
 * stream deadlines do between reads (which the conformance suite, on real
 * HTTP and the live clock, cannot stage without waiting), and how a whole
 * body is counted.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpWire from "../src/HttpWire.js"
import * as WireLimits from "../src/WireLimits.js"

/** Timers that fire only when the test moves the time. */
const scriptedTimers = () => {
  let now = 0
  let next = 0
  const pending = new Map<number, { readonly at: number; readonly f: () => void }>()
  const timers: WireLimits.Timers = {
    now: () => now,
    set: (millis, f) => {
      const id = next++
      pending.set(id, { at: now + millis, f })
      return () => void pending.delete(id)
    }
  }
  /** Moves the time by `millis`, firing what falls due, in order. */
  const advance = (millis: number) => {
    const end = now + millis
    for (;;) {
      const due = [...pending.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0]
      if (due === undefined) break
      pending.delete(due[0])
      now = due[1].at
      due[1].f()
    }
    now = end
  }
  return { timers, advance, pending: () => pending.size }
}

const deadlines = (limits: HttpWire.Limits) => {
  const clock = scriptedTimers()
  const fired: Array<WireLimits.StreamLimit> = []
  const limitsOf = new WireLimits.StreamDeadlines(limits, clock.timers, (limit) => fired.push(limit))
  return { ...clock, fired, deadlines: limitsOf }
}

describe("WireLimits.StreamDeadlines", () => {
  it("first-byte fires unless committed before it", () => {
    const a = deadlines({ firstByteMillis: 100 })
    a.advance(99)
    expect(a.fired).toEqual([])
    a.advance(1)
    expect(a.fired).toEqual(["first-byte"])

    const b = deadlines({ firstByteMillis: 100 })
    b.advance(50)
    b.deadlines.commit()
    b.advance(1000)
    expect(b.fired).toEqual([])
  })

  it("total fires from the start, whatever the reads", () => {
    const { advance, deadlines: d, fired } = deadlines({ totalMillis: 300, idleMillis: 1000 })
    for (let i = 0; i < 5; i++) {
      d.waiting(true)
      advance(50)
      d.waiting(false)
      d.delivered()
    }
    expect(fired).toEqual([])
    advance(50)
    expect(fired).toEqual(["total"])
  })

  it("idle: a reader waiting after its first read, with nothing arriving", () => {
    const { advance, deadlines: d, fired } = deadlines({ idleMillis: 100 })
    // Before the first read the silence is the first-byte limit's, not idle's.
    d.waiting(true)
    advance(500)
    expect(fired).toEqual([])
    d.waiting(false)
    d.delivered()
    d.waiting(true)
    advance(99)
    expect(fired).toEqual([])
    advance(1)
    expect(fired).toEqual(["idle"])
  })

  it("idle: bytes arriving keep it off; a slow reader (not waiting) never trips it", () => {
    const { advance, deadlines: d, fired } = deadlines({ idleMillis: 100 })
    d.delivered()
    d.waiting(true)
    for (let i = 0; i < 10; i++) {
      advance(60)
      d.arrived()
    }
    expect(fired).toEqual([])
    // The reader holds a read for a long time: the server is not silent, the reader is busy.
    d.waiting(false)
    d.delivered()
    advance(10_000)
    expect(fired).toEqual([])
    // Waiting again: a whole period from now.
    d.waiting(true)
    advance(99)
    expect(fired).toEqual([])
    advance(1)
    expect(fired).toEqual(["idle"])
  })

  it("fires once, and end() leaves no timer", () => {
    const a = deadlines({ firstByteMillis: 100, totalMillis: 100, idleMillis: 100 })
    a.advance(1000)
    expect(a.fired).toEqual(["total"])
    expect(a.pending()).toBe(0)
    const b = deadlines({ firstByteMillis: 100, totalMillis: 200, idleMillis: 100 })
    b.deadlines.delivered()
    b.deadlines.waiting(true)
    b.deadlines.end()
    expect(b.pending()).toBe(0)
    b.advance(1000)
    expect(b.fired).toEqual([])
  })
})

describe("WireLimits.TextBody", () => {
  const utf8 = new TextEncoder()
  const head = (status: number, headers: Record<string, string> = {}) => ({ status, headers })

  it("a 2xx: more until past maxBytes, then too-large; the text is what was read", () => {
    const body = new WireLimits.TextBody(head(200), 10)
    expect(body.add(utf8.encode("hello "))).toBe("more")
    expect(body.add(utf8.encode("world"))).toBe("too-large")
    const fits = new WireLimits.TextBody(head(200), 11)
    fits.add(utf8.encode("hello "))
    expect(fits.add(utf8.encode("world"))).toBe("more")
    expect(fits.text()).toBe("hello world")
  })

  it("no maxBytes: no limit", () => {
    const body = new WireLimits.TextBody(head(200), undefined)
    expect(body.add(new Uint8Array(10 * 1024 * 1024))).toBe("more")
  })

  it("an error status: cut at maxErrorBytes (full), whatever maxBytes says", () => {
    const body = new WireLimits.TextBody(head(500), 10)
    expect(body.add(utf8.encode("e".repeat(HttpWire.maxErrorBytes)))).toBe("more")
    expect(body.add(utf8.encode("e".repeat(10)))).toBe("full")
    expect(body.text().length).toBe(HttpWire.maxErrorBytes)
  })

  it("content-length past maxBytes says too-large at the head, for a plain 2xx only", () => {
    expect(new WireLimits.TextBody(head(200, { "content-length": "11" }), 10).declaredTooLarge).toBe(true)
    expect(new WireLimits.TextBody(head(200, { "content-length": "10" }), 10).declaredTooLarge).toBe(false)
    // A coded body's length is its coded size.
    expect(new WireLimits.TextBody(head(200, { "content-length": "11", "content-encoding": "gzip" }), 10).declaredTooLarge)
      .toBe(false)
    expect(new WireLimits.TextBody(head(404, { "content-length": "99999999" }), 10).declaredTooLarge).toBe(false)
  })

  it("a character split across reads is decoded whole", () => {
    const euro = utf8.encode("€")
    const body = new WireLimits.TextBody(head(200), undefined)
    body.add(euro.subarray(0, 1))
    body.add(euro.subarray(1))
    expect(body.text()).toBe("€")
  })

  it("an undecodable body fails a 2xx; an error status keeps it", () => {
    const error = new HttpWire.WireError({ reason: "decode" })
    expect(new WireLimits.TextBody(head(200), 10).undecodable(error)).toBe(error)
    expect(new WireLimits.TextBody(head(502), 10).undecodable(error)).toBeUndefined()
  })
})
