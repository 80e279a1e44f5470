/**
 * The SQL task journal on a sqlite file: the directory journal's behaviour
 * (one entry per task, replaced when recorded again, gone when removed, kept
 * across reopening), and claims with an expiry. Postgres' concurrent claims
 * are in processes.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { SqlTaskJournal } from "../src/index.js"

const entry = (taskId: string, submittedAt: number): TaskJournal.Entry => ({ taskId, model: "video-1", prompt: `prompt of ${taskId}`, submittedAt })

const onFile = (filename: string) => SqlTaskJournal.layer.pipe(Layer.provide(SqliteClient.layer({ filename })), Layer.orDie)

const withJournal = <A, E>(filename: string, f: (journal: TaskJournal.Service, claims: SqlTaskJournal.Claims) => Effect.Effect<A, E>) =>
  Effect.flatMap(Effect.zip(TaskJournal.TaskJournal, SqlTaskJournal.SqlTaskClaims), ([journal, claims]) => f(journal, claims)).pipe(
    Effect.provide(onFile(filename))
  )

const tempFile = () => Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-sql-journal-")), "journal.sqlite")

describe("SqlTaskJournal", () => {
  it.effect("keeps one entry per task, replaced when recorded again, across reopening", () =>
    Effect.gen(function*() {
      const file = tempFile()
      yield* withJournal(file, (journal) =>
        Effect.gen(function*() {
          yield* journal.record(entry("b", 2))
          yield* journal.record(entry("a", 1))
          yield* journal.record({ ...entry("b", 2), prompt: "changed" })
          yield* journal.remove("missing")
        }))
      const entries = yield* withJournal(file, (journal) => journal.list)
      expect(entries).toEqual([entry("a", 1), { ...entry("b", 2), prompt: "changed" }])
      yield* withJournal(file, (journal) => journal.remove("a"))
      expect(yield* withJournal(file, (journal) => journal.list)).toEqual([{ ...entry("b", 2), prompt: "changed" }])
    }))

  it.effect("gives each task to one owner until the claim expires or is released", () =>
    withJournal(tempFile(), (journal, claims) =>
      Effect.gen(function*() {
        for (let i = 0; i < 5; i++) yield* journal.record(entry(`t${i}`, i))
        const first = yield* claims.claim({ owner: "p1", ttl: "30 seconds", limit: 3 })
        const second = yield* claims.claim({ owner: "p2", ttl: "30 seconds", limit: 3 })
        expect(first.map((e) => e.taskId)).toEqual(["t0", "t1", "t2"])
        expect(second.map((e) => e.taskId)).toEqual(["t3", "t4"])
        expect(yield* claims.claim({ owner: "p3", ttl: "30 seconds", limit: 3 })).toEqual([])
        // An owner claiming again keeps (and extends) what it holds.
        expect((yield* claims.claim({ owner: "p1", ttl: "30 seconds", limit: 3 })).map((e) => e.taskId)).toEqual(["t0", "t1", "t2"])
        yield* claims.release("t3", "p2")
        expect((yield* claims.claim({ owner: "p3", ttl: "30 seconds", limit: 3 })).map((e) => e.taskId)).toEqual(["t3"])
        yield* TestClock.adjust("31 seconds")
        expect((yield* claims.claim({ owner: "p3", ttl: "30 seconds", limit: 10 })).map((e) => e.taskId)).toEqual(["t0", "t1", "t2", "t3", "t4"])
      })))

  it.effect("fails with JournalError naming the action when the database refuses it", () =>
    Effect.gen(function*() {
      const file = tempFile()
      Fs.writeFileSync(file, "")
      const error = yield* Effect.flip(
        Effect.provide(TaskJournal.TaskJournal, SqlTaskJournal.layer.pipe(Layer.provide(SqliteClient.layer({ filename: file, readonly: true, disableWAL: true }))))
      )
      expect(error).toMatchObject({ _tag: "JournalError", message: expect.stringMatching(/could not create its table/) })
    }))
})
