/**
 * The behaviour every `TaskJournal` storage promises, written once and run
 * against each (journals.test.ts): the directory journal, the SQL journal on
 * sqlite and on Postgres. Several journals opened on one store stand for
 * several processes; time is the `TestClock`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Videos from "@switchboard/core/Videos"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard, NodeTaskJournal } from "@switchboard/node"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Os from "node:os"
import { nextTurn } from "./fixtures.js"

/** One store, as a test sees it: journals over it, and the store's raw content. */
export interface Store {
  /** The journal of one more process over this store. */
  readonly journal: Layer.Layer<TaskJournal.TaskJournal, unknown>
  /** Writes `text` as the stored record of `taskId`, as a broken or foreign writer would. */
  readonly writeRecord: (taskId: string, text: string) => Effect.Effect<void, unknown>
  /** Writes a claim on `taskId` as another process left it. */
  readonly writeClaim: (taskId: string, claim: TaskJournal.Claim) => Effect.Effect<void, unknown>
  /** The claim stored on `taskId`, if any. */
  readonly readClaim: (taskId: string) => Effect.Effect<Option.Option<TaskJournal.Claim>, unknown>
}

const entry = (taskId: string, submittedAt: number, extra: Partial<TaskJournal.Entry> = {}): TaskJournal.Entry => ({
  taskId,
  model: "video-1",
  prompt: `prompt of ${taskId}`,
  submittedAt,
  ...extra
})

const open = (store: Store) =>
  Effect.map(Layer.build(Layer.orDie(store.journal)), Context.get(TaskJournal.TaskJournal))

/** Claims in a scope of its own, released by `release` (a process that stops following the task). */
const claimOpen = (journal: TaskJournal.Service, taskId: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const taken = yield* Scope.provide(journal.claim(taskId), scope)
    return { taken, release: Scope.close(scope, Exit.void) }
  })

const claimOnce = (journal: TaskJournal.Service, taskId: string) => Effect.scoped(journal.claim(taskId))

/** Another process of this process table, alive (this one's pid), or gone (a pid no process has). */
const otherOwner = (alive: boolean): TaskJournal.Owner => ({
  ...NodeTaskJournal.makeOwner(),
  id: alive ? "another-live-process" : "a-process-that-is-gone",
  pid: alive ? process.pid : 999_999_999
})

/**
 * `check` until `done` holds, letting the event loop turn between tries: a
 * hot loop would starve the I/O it waits for (the renewals of another fiber).
 */
export const eventually = <A, E>(check: Effect.Effect<A, E>, done: (a: A) => boolean): Effect.Effect<A, E> =>
  Effect.repeat(Effect.tap(check, () => nextTurn), { until: done })

/** A sleep is pending (a claim's renewal waits): the clock may move. */
const renewalPending = eventually(RecordingClock.sleeps, (all) => all.length > 0)

/** A test on the `TestClock`, its pending sleeps recorded. */
const test = (name: string, body: () => Effect.Effect<void, unknown, Scope.Scope>) =>
  it.effect(name, () => Effect.provide(body(), RecordingClock.layer))

/**
 * Declares the suite for a kind of store; `fresh` makes an empty store, its
 * files or database removed with the scope.
 */
export const journalSuite = (name: string, fresh: Effect.Effect<Store, unknown, Scope.Scope>) =>
  describe(`${name}: the TaskJournal promises`, () => {
    test("one record per task, replaced when recorded again, whole (URL and output included), kept across reopening", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const first = yield* open(store)
        yield* first.record(entry("b", 2))
        yield* first.record(entry("a", 1, { output: "/videos" }))
        yield* first.record(entry("b", 2, { prompt: "changed", videoUrl: "https://cdn.example/b.mp4" }))
        yield* first.remove("missing")
        const reopened = yield* open(store)
        const expected = [entry("a", 1, { output: "/videos" }), entry("b", 2, { prompt: "changed", videoUrl: "https://cdn.example/b.mp4" })]
        expect(yield* reopened.list).toEqual(expected)
        expect(Option.getOrUndefined(yield* reopened.get("b"))).toEqual(expected[1])
        expect(Option.isNone(yield* reopened.get("missing"))).toBe(true)
        yield* reopened.remove("a")
        expect(yield* first.list).toEqual([expected[1]])
      }))

    test("a reservation is no record: the record written in its room is, and an unused one leaves nothing", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const journal = yield* open(store)
        yield* Effect.scoped(journal.reserve({ model: "video-1", prompt: "never sent" }))
        yield* Effect.scoped(Effect.gen(function*() {
          const reservation = yield* journal.reserve({ model: "video-1", prompt: "prompt of r", output: "/videos" })
          expect(yield* journal.scan).toEqual({ entries: [], quarantined: [] })
          yield* reservation.record(entry("r", 1, { output: "/videos" }))
        }))
        const listing = yield* (yield* open(store)).scan
        expect(listing).toEqual({ entries: [entry("r", 1, { output: "/videos" })], quarantined: [] })
      }))

    test("hostile ids from the service: each kept apart under its own id, or refused with JournalError; never a defect", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const journal = yield* open(store)
        // Lone surrogates (two of them, which drivers would both turn into U+FFFD), NUL, control and path characters.
        const ids = ["task\ud800x", "task\udc00x", "task\ufffdx", "a\u0000b", "\u0001sha256:x", "../../x", "%E0%A4%A", " ", "é".repeat(2000)]
        const recorded: Array<string> = []
        for (const [i, taskId] of ids.entries()) {
          const result = yield* Effect.result(journal.record(entry(taskId, i)))
          if (Result.isSuccess(result)) recorded.push(taskId)
          else expect(result.failure._tag).toBe("JournalError")
        }
        // Only a file name too long for the file system may be refused.
        expect(recorded).toEqual(expect.arrayContaining(ids.slice(0, -1)))
        expect((yield* (yield* open(store)).list).map((e) => e.taskId)).toEqual(recorded)
        for (const taskId of recorded) {
          expect(Option.getOrUndefined(yield* journal.get(taskId))).toEqual(entry(taskId, ids.indexOf(taskId)))
          expect(yield* claimOnce(journal, taskId)).toBe(true)
          yield* journal.remove(taskId)
        }
        expect(yield* journal.scan).toEqual({ entries: [], quarantined: [] })
      }))

    test("a record that cannot be read is set aside once, reported, and out of the others' way", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const journal = yield* open(store)
        yield* journal.record(entry("good", 1))
        yield* store.writeRecord("bad", JSON.stringify({ taskId: "bad", model: "video-1", prompt: "p", submittedAt: "yesterday" }))
        yield* store.writeRecord("truncated", "{\"taskId\":\"trunc")
        const { entries, quarantined } = yield* journal.scan
        expect(entries).toEqual([entry("good", 1)])
        expect(quarantined.map((q) => q.key).sort()).toEqual([expect.stringContaining("bad"), expect.stringContaining("truncated")])
        for (const q of quarantined) expect(q.movedTo).not.toBe("")
        expect(Option.isNone(yield* journal.get("bad"))).toBe(true)
        expect(yield* (yield* open(store)).scan).toEqual({ entries: [entry("good", 1)], quarantined: [] })
      }))

    test("a live holder keeps its task until it releases it; other tasks stay free", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const [first, second] = [yield* open(store), yield* open(store)]
        yield* first.record(entry("t1", 1))
        const held = yield* claimOpen(first, "t1")
        expect(held.taken).toBe(true)
        expect(yield* claimOpen(second, "t1")).toMatchObject({ taken: false })
        expect(yield* claimOnce(second, "t2")).toBe(true)
        yield* held.release
        expect(yield* claimOnce(second, "t1")).toBe(true)
        // Claims do not touch the records.
        expect(yield* second.list).toEqual([entry("t1", 1)])
      }))

    test("many processes claiming at once: each task goes to exactly one", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const journals = yield* Effect.all([open(store), open(store), open(store), open(store)])
        const taskIds = Array.from({ length: 30 }, (_, i) => `t${i}`)
        yield* Effect.forEach(taskIds, (taskId, i) => journals[0]!.record(entry(taskId, i)), { discard: true })
        const won = yield* Effect.forEach(
          journals,
          (journal) => Effect.filter(taskIds, (taskId) => Effect.map(claimOpen(journal, taskId), (held) => held.taken), { concurrency: 5 }),
          { concurrency: "unbounded" }
        )
        const all = won.flat()
        expect(all.sort()).toEqual([...taskIds].sort())
      }))

    test("a claim not renewed is taken over once expired", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const journal = yield* open(store)
        const now = yield* Clock.currentTimeMillis
        yield* store.writeClaim("t1", { owner: otherOwner(true), expiresAt: now + 120_000 })
        yield* TestClock.adjust("119 seconds")
        expect(yield* claimOnce(journal, "t1")).toBe(false)
        yield* TestClock.adjust("2 seconds")
        expect(yield* claimOnce(journal, "t1")).toBe(true)
      }))

    test("a holder renews its claim, and keeps it past the first expiry", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const [first, second] = [yield* open(store), yield* open(store)]
        expect((yield* claimOpen(first, "t1")).taken).toBe(true)
        // 4 renewals of 40 s: past the first expiry (120 s).
        for (let i = 0; i < 4; i++) {
          // The renewals run on their own fiber, over real I/O: the clock
          // moves once the next one waits, and the test goes on once it landed.
          yield* renewalPending
          yield* TestClock.adjust("40 seconds")
          const now = yield* Clock.currentTimeMillis
          yield* eventually(store.readClaim("t1"), (claim) => Option.isSome(claim) && claim.value.expiresAt >= now + 120_000)
        }
        expect(yield* claimOnce(second, "t1")).toBe(false)
      }))

    test("a holder whose claim was taken over meanwhile does not renew it over the new holder's", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const first = yield* open(store)
        expect((yield* claimOpen(first, "t1")).taken).toBe(true)
        yield* renewalPending
        // Its renewals stalled past the expiry, and another process took the task.
        const now = yield* Clock.currentTimeMillis
        const taker = { owner: otherOwner(true), expiresAt: now + 120_000 }
        yield* store.writeClaim("t1", taker)
        yield* TestClock.adjust("40 seconds")
        yield* renewalPending
        expect(Option.getOrUndefined(yield* store.readClaim("t1"))).toEqual(taker)
      }))

    test("a claim of a process that is gone is taken over at once; a broken claim too", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const journal = yield* open(store)
        const now = yield* Clock.currentTimeMillis
        yield* store.writeClaim("t1", { owner: otherOwner(false), expiresAt: now + 120_000 })
        expect(yield* claimOnce(journal, "t1")).toBe(true)
        yield* store.writeClaim("t2", { owner: otherOwner(true), expiresAt: now + 120_000 })
        expect(yield* claimOnce(journal, "t2")).toBe(false)
      }))

    test("a dead-looking pid of another process table (a container sharing the host name), or of an old record, waits for expiry", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const journal = yield* open(store)
        const now = yield* Clock.currentTimeMillis
        const gone = otherOwner(false)
        // Its own PID namespace: pid 999999999 may run there.
        yield* store.writeClaim("container", { owner: { ...gone, pidNamespace: "pid:[1]" }, expiresAt: now + 120_000 })
        // Another boot: the pid table of before a restart, or of another machine named alike.
        yield* store.writeClaim("boot", { owner: { ...gone, bootId: "another-boot" }, expiresAt: now + 120_000 })
        // Written by an earlier version: no process table named.
        yield* store.writeClaim("old", { owner: { id: gone.id, pid: gone.pid!, host: Os.hostname() }, expiresAt: now + 120_000 })
        for (const taskId of ["container", "boot", "old"]) expect(yield* claimOnce(journal, taskId), taskId).toBe(false)
        expect(yield* journal.scan).toEqual({ entries: [], quarantined: [] })
        for (const taskId of ["container", "boot", "old"]) expect(Option.isSome(yield* store.readClaim(taskId)), taskId).toBe(true)
        yield* TestClock.adjust("121 seconds")
        for (const taskId of ["container", "boot", "old"]) expect(yield* claimOnce(journal, taskId), taskId).toBe(true)
      }))

    test("a claim without a record, left by a process that is gone, is dropped when the journal is read; a live one stays", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const journal = yield* open(store)
        const now = yield* Clock.currentTimeMillis
        yield* store.writeClaim("gone", { owner: otherOwner(false), expiresAt: now + 120_000 })
        yield* store.writeClaim("alive", { owner: otherOwner(true), expiresAt: now + 120_000 })
        expect(yield* journal.scan).toEqual({ entries: [], quarantined: [] })
        expect(Option.isNone(yield* store.readClaim("gone"))).toBe(true)
        expect(Option.getOrUndefined(yield* store.readClaim("alive"))?.owner.id).toBe("another-live-process")
      }))

    test("remove drops the record and this process's claim", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const [first, second] = [yield* open(store), yield* open(store)]
        yield* first.record(entry("t1", 1))
        expect((yield* claimOpen(first, "t1")).taken).toBe(true)
        yield* first.remove("t1")
        expect(Option.isNone(yield* second.get("t1"))).toBe(true)
        expect(yield* claimOnce(second, "t1")).toBe(true)
      }))

    it.live("Videos over it: a submitter's tasks are held while it runs; two resumers share the rest, each task polled by one", () =>
      Effect.gen(function*() {
        const store = yield* fresh
        const emulator = yield* Emulator.Emulator
        /** The SDK of one more process, over this store, until the test ends or `scope` closes. */
        const videosOf = (scope?: Scope.Scope) => {
          const sdk = NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, journal: Layer.orDie(store.journal) })
          const built = scope === undefined ? Layer.build(sdk) : Layer.buildWithScope(sdk, scope)
          return Effect.map(Effect.orDie(built), Context.get(Videos.Videos))
        }
        // A process that submits 4 tasks and stops before polling them: its claims end with it.
        const submitter = yield* Scope.make()
        const videos = yield* videosOf(submitter)
        const submitted = yield* Effect.forEach([0, 1, 2, 3], (i) => videos.submit({ model: "video-1", prompt: `clip ${i}` }, { output: "/videos" }))
        // While it runs, another process finds them busy.
        const meanwhile = yield* Effect.flatMap(videosOf(), (other) => other.resumePending())
        expect(meanwhile.pending).toEqual([])
        expect(meanwhile.busy.map((e) => e.taskId).sort()).toEqual([...submitted].sort())
        yield* Scope.close(submitter, Exit.void)

        const [a, b] = yield* Effect.all([videosOf(), videosOf()])
        const [first, second] = yield* Effect.all([a!, b!].map((resumer) => resumer.resumePending({ schedule: Schedule.spaced("1 millis") })), {
          concurrency: 2
        })
        const taken = [...first!.pending, ...second!.pending].map((p) => p.entry.taskId)
        expect(taken.sort()).toEqual([...submitted].sort())
        // One resumer follows its tasks to the end: each keeps its URL and output until completed.
        const journal = yield* open(store)
        for (const pending of first!.pending) {
          yield* Stream.runDrain(pending.updates)
          expect(Option.getOrUndefined(yield* journal.get(pending.entry.taskId))).toMatchObject({
            output: "/videos",
            videoUrl: expect.stringMatching(/^http/)
          })
        }
      }).pipe(Effect.provide(Emulator.layer())))
  })
