/**
 * The fleet's pacing budget in SQL: two clients of one database stand for
 * two processes, on a sqlite file and on a private Postgres (whose row lock
 * is `FOR UPDATE`; fails loudly when Debian's postgresql is missing).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { SqlApprovalStore, SqliteClient, SqlPacer, SqlTaskJournal } from "../src/index.js"
import * as Ports from "@switchboard/test-support/Ports"
import { type Postgres, startPostgres } from "./postgres.js"

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

let postgres: Postgres | undefined
beforeAll(() => {
  // A port of its own (test-support/Ports.ts): files run at once never share one.
  postgres = startPostgres(Ports.postgres.sqlPacer())
}, 60_000)
afterAll(() => postgres?.stop())

describe("SqlPacer on Postgres", () => {
  it.effect("processes share one budget; concurrent reserves take one request each", () =>
    Effect.gen(function*() {
      const url = Redacted.make(postgres!.database("pacing"))
      const pacerOn = Effect.flatMap(Layer.build(PgClient.layer({ url })), (context) => Effect.provide(SqlPacer.make(), context))
      const a = yield* pacerOn
      const b = yield* pacerOn
      expect(yield* a.reserve(0)).toBe(0)
      yield* a.record({ limitRequests: 5, remainingRequests: 3, resetRequests: Duration.seconds(1) }, 0)
      yield* a.release
      // Three requests left: of six reserves at once across both, three go.
      const waits = yield* Effect.all([a, b, a, b, a, b].map((p) => p.reserve(10)), { concurrency: "unbounded" })
      expect(waits.filter((w) => w === 0)).toHaveLength(3)
      expect(waits.filter((w) => w === 990)).toHaveLength(3)
    }).pipe(Effect.scoped), 60_000)

  // Processes of a fleet start together on a new database: each creates the
  // tables it needs. Postgres lets two sessions' CREATE TABLE IF NOT EXISTS
  // race, and the loser fails on a catalog index (seen with the pacer's
  // three processes), so twelve clients build each store at once, on three
  // new databases each.
  const makers: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown, SqlClient.SqlClient>]> = [
    ["SqlPacer", SqlPacer.make()],
    ["SqlTaskJournal", SqlTaskJournal.make],
    ["SqlApprovalStore", SqlApprovalStore.make]
  ]
  for (const [name, make] of makers) {
    it.effect(`${name}: twelve clients starting at once on a new database all start`, () =>
      Effect.gen(function*() {
        for (let round = 0; round < 3; round++) {
          const url = Redacted.make(postgres!.database(`tables_${name.toLowerCase()}_${round}`))
          const start = Effect.flatMap(Layer.build(PgClient.layer({ url })), (context) => Effect.provide(make, context))
          const started = yield* Effect.all(Array.from({ length: 12 }, () => Effect.exit(start)), { concurrency: "unbounded" })
          expect(started.filter((exit) => exit._tag === "Failure")).toEqual([])
        }
      }).pipe(Effect.scoped), 60_000)
  }
})
