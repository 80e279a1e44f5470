/**
 * A value that node callbacks update synchronously and fibers can wait on
 * (`await` resolves once a predicate holds) without polling on any clock: the
 * waiters are `Deferred`s completed by the update itself.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/**
 * @internal
 */
export interface Watch<A> {
  readonly get: () => A
  readonly update: (f: (a: A) => A) => void
  readonly await: (predicate: (a: A) => boolean) => Effect.Effect<void>
}

interface Waiter<A> {
  readonly predicate: (a: A) => boolean
  readonly deferred: Deferred.Deferred<void>
}

export const make = <A>(initial: A): Watch<A> => {
  let value = initial
  const waiters = new Set<Waiter<A>>()
  const update = (f: (a: A) => A) => {
    value = f(value)
    for (const waiter of waiters) {
      if (waiter.predicate(value)) {
        waiters.delete(waiter)
        Deferred.doneUnsafe(waiter.deferred, Exit.void)
      }
    }
  }
  // Checking and registering happen in one synchronous step, so no update slips in between.
  const wait = (predicate: (a: A) => boolean) =>
    Effect.suspend(() => {
      if (predicate(value)) return Effect.void
      const waiter = { predicate, deferred: Deferred.makeUnsafe<void>() }
      waiters.add(waiter)
      return Deferred.await(waiter.deferred).pipe(Effect.ensuring(Effect.sync(() => waiters.delete(waiter))))
    })
  return { get: () => value, update, await: wait }
}
