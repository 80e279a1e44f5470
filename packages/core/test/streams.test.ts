/**
 * `internal/streams`: `unwrap` and `unwrapScoped` (now Effect 4's own
 * `Stream.unwrap`) keep what the SDK relies on: the effect runs when
 * the stream does (each time), and the scope closes once, with the stream's
 * exit, whether it ends, fails or is cut short by its consumer.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Streams from "../src/internal/streams.js"

/** A stream that records when its scope closes, and with what. */
const recorded = <E>(inner: Stream.Stream<number, E>) => {
  const closed: Array<Exit.Exit<unknown, unknown>> = []
  let runs = 0
  const stream = Streams.unwrapScoped(
    Effect.as(
      Effect.tap(Effect.addFinalizer((exit) => Effect.sync(() => closed.push(exit))), () => Effect.sync(() => runs++)),
      inner
    )
  )
  return { stream, closed, runs: () => runs }
}

describe("Streams.unwrap", () => {
  it.effect("runs the effect each time the stream runs, and fails with its error", () =>
    Effect.gen(function*() {
      let runs = 0
      const stream = Streams.unwrap(Effect.sync(() => (runs++, Stream.make(1, 2))))
      expect(runs).toBe(0)
      expect((yield* Stream.runCollect(stream))).toEqual([1, 2])
      expect((yield* Stream.runCollect(stream))).toEqual([1, 2])
      expect(runs).toBe(2)
      expect(yield* Effect.flip(Stream.runDrain(Streams.unwrap(Effect.fail("no") as Effect.Effect<Stream.Stream<number>, string>)))).toBe("no")
    }))
})

describe("Streams.unwrapScoped", () => {
  it.effect("closes the scope once the stream has ended, after its elements", () =>
    Effect.gen(function*() {
      const { closed, runs, stream } = recorded(Stream.make(1, 2, 3))
      const seen: Array<number> = []
      yield* Stream.runForEach(stream, (n) => Effect.sync(() => seen.push(n * 10 + closed.length)))
      expect(seen).toEqual([10, 20, 30])
      expect(closed.length).toBe(1)
      expect(Exit.isSuccess(closed[0]!)).toBe(true)
      expect(runs()).toBe(1)
    }))

  it.effect("closes it with the failure when the stream fails", () =>
    Effect.gen(function*() {
      const { closed, stream } = recorded(Stream.concat(Stream.make(1), Stream.fail("broken")))
      expect(yield* Effect.flip(Stream.runDrain(stream))).toBe("broken")
      expect(closed.length).toBe(1)
      expect(Exit.isFailure(closed[0]!)).toBe(true)
    }))

  it.effect("closes it when the consumer stops early", () =>
    Effect.gen(function*() {
      const { closed, stream } = recorded(Stream.iterate(0, (n) => n + 1))
      expect((yield* Stream.runCollect(Stream.take(stream, 2)))).toEqual([0, 1])
      expect(closed.length).toBe(1)
    }))

  it.effect("closes it when making the stream fails", () =>
    Effect.gen(function*() {
      const closed: Array<Exit.Exit<unknown, unknown>> = []
      const refused: Effect.Effect<Stream.Stream<number>, string, Scope.Scope> = Effect.andThen(
        Effect.addFinalizer((exit) => Effect.sync(() => closed.push(exit))),
        Effect.fail("refused")
      )
      const stream = Streams.unwrapScoped(refused)
      expect(yield* Effect.flip(Stream.runDrain(stream))).toBe("refused")
      expect(closed.length).toBe(1)
      expect(Exit.isFailure(closed[0]!)).toBe(true)
    }))
})
