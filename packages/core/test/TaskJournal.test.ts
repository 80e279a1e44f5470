/**
 * The journal's claims, over one memory storage seen by two owners (two
 * processes): a live holder keeps its task, an expired claim or one of a
 * process that is gone is taken over, a renewing holder keeps it past the
 * expiry, and a released one is free at once. Time is the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import * as TaskJournal from "../src/TaskJournal.js"

/** Two journals over one storage, as two processes sharing a directory. */
const twoOwners = (options: { readonly shared: boolean; readonly firstAlive: boolean }) =>
  Effect.gen(function*() {
    const storage = TaskJournal.memoryStorage()
    const first = yield* TaskJournal.make({ ...storage, owner: { id: "first" }, shared: options.shared })
    const second = yield* TaskJournal.make({
      ...storage,
      owner: { id: "second" },
      shared: options.shared,
      isAlive: (owner) => (owner.id === "first" ? options.firstAlive : true)
    })
    return { first, second }
  })

const claimOpen = (journal: TaskJournal.Service, taskId: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const taken = yield* Scope.provide(journal.claim(taskId), scope)
    return { taken, release: Scope.close(scope, Exit.void) }
  })

describe("TaskJournal claims", () => {
  it.effect("a live holder keeps its task until it releases it", () =>
    Effect.gen(function*() {
      const { first, second } = yield* twoOwners({ shared: false, firstAlive: true })
      const held = yield* claimOpen(first, "t1")
      expect(held.taken).toBe(true)
      expect(yield* Effect.scoped(second.claim("t1"))).toBe(false)
      // Another task is free.
      expect(yield* Effect.scoped(second.claim("t2"))).toBe(true)
      yield* held.release
      expect(yield* Effect.scoped(second.claim("t1"))).toBe(true)
    }))

  it.effect("a claim not renewed is taken over once expired", () =>
    Effect.gen(function*() {
      const { first, second } = yield* twoOwners({ shared: false, firstAlive: true })
      expect((yield* claimOpen(first, "t1")).taken).toBe(true)
      yield* TestClock.adjust("119 seconds")
      expect(yield* Effect.scoped(second.claim("t1"))).toBe(false)
      yield* TestClock.adjust("2 seconds")
      expect(yield* Effect.scoped(second.claim("t1"))).toBe(true)
    }))

  it.effect("a holder that renews keeps its claim past the expiry", () =>
    Effect.gen(function*() {
      const { first, second } = yield* twoOwners({ shared: true, firstAlive: true })
      expect((yield* claimOpen(first, "t1")).taken).toBe(true)
      for (let i = 0; i < 10; i++) yield* TestClock.adjust("40 seconds")
      expect(yield* Effect.scoped(second.claim("t1"))).toBe(false)
    }))

  it.effect("a claim of a process that is gone is taken over at once", () =>
    Effect.gen(function*() {
      const { first, second } = yield* twoOwners({ shared: false, firstAlive: false })
      expect((yield* claimOpen(first, "t1")).taken).toBe(true)
      expect(yield* Effect.scoped(second.claim("t1"))).toBe(true)
    }))

  it.effect("a claim without a record, of a process that is gone, is dropped when the journal is read", () =>
    Effect.gen(function*() {
      const storage = TaskJournal.memoryStorage()
      const gone = yield* TaskJournal.make({ ...storage, owner: { id: "gone" } })
      const reader = yield* TaskJournal.make({ ...storage, owner: { id: "reader" }, isAlive: (owner) => owner.id !== "gone" })
      const alive = yield* TaskJournal.make({ ...storage, owner: { id: "alive" } })
      yield* claimOpen(gone, "t1")
      yield* claimOpen(alive, "t2")
      yield* reader.scan
      expect(yield* storage.keys).toEqual(["claim-t2"])
    }))

  it.effect("remove drops the record and this owner's claim", () =>
    Effect.gen(function*() {
      const { first, second } = yield* twoOwners({ shared: false, firstAlive: true })
      yield* first.record({ taskId: "t1", model: "video-1", prompt: "p", submittedAt: 0 })
      expect((yield* claimOpen(first, "t1")).taken).toBe(true)
      yield* first.remove("t1")
      expect(yield* second.get("t1")).toEqual(Option.none())
      expect(yield* Effect.scoped(second.claim("t1"))).toBe(true)
    }))
})

describe("TaskJournal.layerMemory", () => {
  // Effect 4 memoizes a layer by reference across nested provides: a memory
  // journal provided inside another must still be a journal of its own.
  it.effect("provided inside another, it is a new, empty journal", () =>
    Effect.gen(function*() {
      const outer = yield* TaskJournal.TaskJournal
      yield* outer.record({ taskId: "t1", model: "video-1", prompt: "a fox", submittedAt: 0 })
      const inner = yield* Effect.provide(Effect.flatMap(TaskJournal.TaskJournal, (journal) => journal.list), TaskJournal.layerMemory)
      expect(inner).toEqual([])
      expect((yield* outer.list).map((entry) => entry.taskId)).toEqual(["t1"])
    }).pipe(Effect.provide(TaskJournal.layerMemory)))
})
