/**
 * `Stream.tap` without its concurrent path. `Stream.tap` and
 * `Stream.mapEffect` choose between a sequential and a concurrent stage when
 * called, so a bundle that uses either carries the concurrent one too
 * (`Queue`, a merge of fibers: 2.1 KB of gzip with the poll's deadline,
 * docs/decisions.md). The video poll needs neither.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/**
 * Runs `f` on each element, in order, before it goes on. A read's elements
 * go on together, after `f` ran on all of them (a poll's reads hold one).
 */
export const tapEach = <A, E, R, X, E2, R2>(
  self: Stream.Stream<A, E, R>,
  f: (a: A) => Effect.Effect<X, E2, R2>
): Stream.Stream<A, E | E2, R | R2> =>
  Stream.transformPull(self, (pull) =>
    Effect.succeed(Effect.tap(pull, (batch) => Effect.forEach(batch, f, { discard: true }))))
