/**
 * The fleet's pacing budget in SQL (sqlite here: two clients of one file
 * stand for two processes; the same statements run on Postgres, whose row
 * lock is `FOR UPDATE`).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { SqliteClient, SqlPacer } from "../src/index.js"

const database = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-pacing-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => Path.join(dir, "pacing.sqlite")))

/** A pacer over its own client of `file`: another process, as far as the budget knows. */
const pacerOf = (file: string, name?: string) =>
  Effect.flatMap(Layer.build(SqliteClient.layer({ filename: file })), (context) =>
    Effect.provide(SqlPacer.make(name), context))

const spent = { limitRequests: 2, remainingRequests: 0, resetRequests: Duration.seconds(1) }

describe("SqlPacer", () => {
  it.effect("one process's reply holds the other's calls until the reset", () =>
    Effect.gen(function*() {
      const file = yield* database
      const a = yield* pacerOf(file)
      const b = yield* pacerOf(file)
      expect(yield* a.reserve(0)).toBe(0)
      yield* a.record(spent, 0)
      yield* a.release
      expect(yield* b.reserve(100)).toBe(900)
      // After the reset the budget is whole again, for both.
      expect(yield* b.reserve(1000)).toBe(0)
      // Another key has a budget of its own.
      const c = yield* pacerOf(file, "other-key")
      expect(yield* c.reserve(100)).toBe(0)
    }).pipe(Effect.scoped))

  it.effect("a row that does not decode is started afresh; stale in-flight counts are dropped", () =>
    Effect.gen(function*() {
      const file = yield* database
      const a = yield* pacerOf(file)
      const sql = yield* Effect.provide(SqlClient.SqlClient, yield* Layer.build(SqliteClient.layer({ filename: file })))
      yield* sql`UPDATE ${sql(SqlPacer.table)} SET state = ${"{\"requests\": \"__proto__\"}"}`
      yield* sql`INSERT INTO ${sql(SqlPacer.table)} (name, state) VALUES ('default', 'not json') ON CONFLICT (name) DO UPDATE SET state = excluded.state`
      expect(yield* a.reserve(0)).toBe(0)
      // In flight, never answered (its process died): a second call waits for its reply...
      expect(yield* a.reserve(10)).toBe(25)
      // ...until the count is stale.
      expect(yield* a.reserve(10 + Duration.toMillis(SqlPacer.staleAfter) + 1)).toBe(0)
    }).pipe(Effect.scoped))
})
