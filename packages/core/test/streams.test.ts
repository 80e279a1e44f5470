/**
 * What the SDK relies on from Effect 4's `Stream.unwrap` (on Effect 3, our own
 * channel-level `unwrap`/`unwrapScoped` in `internal/streams`): the effect runs
 * when the stream does (each time), and its scope closes once, with the
 * stream's exit, whether it ends, fails or is cut short by its consumer.
 * Effect's stream modules may change in a minor; these hold them to it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** A stream that records when its scope closes, and with what. */
const recorded = <E>(inner: Stream.Stream<number, E>) => {
  const closed: Array<Exit.Exit<unknown, unknown>> = []
  let runs = 0
  const stream = Stream.unwrap(
    Effect.as(
      Effect.tap(Effect.addFinalizer((exit) => Effect.sync(() => closed.push(exit))), () => Effect.sync(() => runs++)),
      inner
    )
  )
  return { stream, closed, runs: () => runs }
}

describe("Stream.unwrap", () => {
  it.effect("runs the effect each time the stream runs, and fails with its error", () =>
    Effect.gen(function*() {
      let runs = 0
      const stream = Stream.unwrap(Effect.sync(() => (runs++, Stream.make(1, 2))))
      expect(runs).toBe(0)
      expect((yield* Stream.runCollect(stream))).toEqual([1, 2])
      expect((yield* Stream.runCollect(stream))).toEqual([1, 2])
      expect(runs).toBe(2)
      expect(yield* Effect.flip(Stream.runDrain(Stream.unwrap(Effect.fail("no") as Effect.Effect<Stream.Stream<number>, string>)))).toBe("no")
    }))
})

describe("Stream.unwrap with a scope", () => {
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
      const stream = Stream.unwrap(refused)
      expect(yield* Effect.flip(Stream.runDrain(stream))).toBe("refused")
      expect(closed.length).toBe(1)
      expect(Exit.isFailure(closed[0]!)).toBe(true)
    }))
})
