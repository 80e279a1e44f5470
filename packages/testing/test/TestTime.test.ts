import { describe, expect, it } from "@effect/vitest"
import { TestTime } from "@switchboard/testing"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/** Work that yields many times without sleeping: fibers of it stay queued. */
const busy = Effect.forEach(Array.from({ length: 20_000 }, (_, i) => i), () => Effect.yieldNow, { discard: true })

describe("TestTime.run", () => {
  it.effect("moves the TestClock to each sleep, in wake-up order, across fibers", () =>
    TestTime.run(Effect.gen(function*() {
      const woke: Array<[string, number]> = []
      const sleeper = (name: string, millis: number) =>
        Effect.andThen(Effect.sleep(millis), Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => woke.push([name, now]))))
      yield* Effect.all([sleeper("slow", 300), sleeper("fast", 100), sleeper("middle", 200)], { concurrency: "unbounded" })
      expect(woke).toEqual([["fast", 100], ["middle", 200], ["slow", 300]])
      expect([...(yield* TestTime.slept)].sort((a, b) => a - b)).toEqual([100, 200, 300])
    })))

  it.effect("never moves time while the program still works: a timeout around busy work does not fire", () =>
    TestTime.run(Effect.gen(function*() {
      const done = yield* Effect.timeoutOption(Effect.as(busy, "done"), "1 second")
      expect(done._tag).toBe("Some")
      expect(yield* Clock.currentTimeMillis).toBe(0)
    })))

  it.effect("a sleep longer than its timeout times out, at the timeout's time", () =>
    TestTime.run(Effect.gen(function*() {
      const result = yield* Effect.timeoutOption(Effect.sleep("2 seconds"), "1 second")
      expect(result._tag).toBe("None")
      expect(yield* Clock.currentTimeMillis).toBe(1000)
    })))

  it.effect("a failure comes out as it is", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(TestTime.run(Effect.andThen(Effect.sleep("5 seconds"), Effect.fail("late"))))
      expect(error).toBe("late")
    }))

  it.live("on a live clock the program runs as it is", () =>
    Effect.gen(function*() {
      expect(yield* TestTime.run(Effect.as(Effect.sleep("1 millis"), 7))).toBe(7)
      expect(yield* TestTime.slept).toEqual([])
    }))
})
