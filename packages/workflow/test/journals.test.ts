/**
 * The one `TaskJournal` behaviour suite (journalSuite.ts), run against every
 * storage: the directory journal (`@switchboard/node`), the SQL journal on a
 * sqlite file, and on a private Postgres (fails loudly when Debian's
 * postgresql is missing: never skipped).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import { NodeTaskJournal } from "@switchboard/node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { SqliteClient, SqlTaskJournal } from "../src/index.js"
import { journalSuite, type Store } from "./journalSuite.js"
import * as Ports from "@switchboard/test-support/Ports"
import { type Postgres, startPostgres } from "./postgres.js"

const decodeClaim = Schema.decodeSync(Schema.fromJsonString(TaskJournal.Claim))
const encodeClaim = Schema.encodeSync(Schema.fromJsonString(TaskJournal.Claim))

const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-journals-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

const directoryStore: Effect.Effect<Store, never, Scope.Scope> = Effect.map(temporaryDirectory, (dir) => {
  const file = (key: string) => Path.join(dir, `${encodeURIComponent(key)}.json`)
  return {
    journal: NodeTaskJournal.layer(dir),
    writeRecord: (taskId, text) => Effect.sync(() => Fs.writeFileSync(file(`task-${taskId}`), text)),
    writeClaim: (taskId, claim) => Effect.sync(() => Fs.writeFileSync(file(`claim-${taskId}`), encodeClaim(claim))),
    readClaim: (taskId) =>
      Effect.sync(() => (Fs.existsSync(file(`claim-${taskId}`)) ? Option.some(decodeClaim(Fs.readFileSync(file(`claim-${taskId}`), "utf8"))) : Option.none()))
  }
})

/** A store in the database `client` opens: the journal's tables made, and a client of its own for the raw rows. */
const sqlStore = (client: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  Effect.gen(function*() {
    const journal = SqlTaskJournal.layer.pipe(Layer.provide(client))
    yield* Layer.build(journal)
    const sql = Context.get(yield* Layer.build(client), SqlClient.SqlClient)
    const tasks = sql(SqlTaskJournal.tables.tasks)
    return {
      journal,
      writeRecord: (taskId, text) =>
        sql`INSERT INTO ${tasks} (task_id, record) VALUES (${taskId}, ${text}) ON CONFLICT (task_id) DO UPDATE SET record = excluded.record`,
      writeClaim: (taskId, claim) =>
        sql`INSERT INTO ${tasks} (task_id, claimed_by, claim) VALUES (${taskId}, ${claim.owner.id}, ${encodeClaim(claim)})
          ON CONFLICT (task_id) DO UPDATE SET claimed_by = excluded.claimed_by, claim = excluded.claim`,
      readClaim: (taskId) =>
        Effect.map(sql<{ claim: string | null }>`SELECT claim FROM ${tasks} WHERE task_id = ${taskId}`, (rows) =>
          Option.map(Option.fromNullishOr(rows[0]?.claim), decodeClaim))
    } satisfies Store
  })

journalSuite("the directory journal", directoryStore)

journalSuite(
  "SqlTaskJournal on sqlite",
  Effect.flatMap(temporaryDirectory, (dir) => sqlStore(SqliteClient.layer({ filename: Path.join(dir, "journal.sqlite") })))
)

let postgres: Postgres | undefined
let databases = 0
beforeAll(() => {
  // A port of its own (test-support/Ports.ts): files run at once never share one.
  postgres = startPostgres(Ports.postgres.journals())
}, 60_000)
afterAll(() => postgres?.stop())

journalSuite(
  "SqlTaskJournal on Postgres",
  Effect.suspend(() => sqlStore(PgClient.layer({ url: Redacted.make(postgres!.database(`journal_${++databases}`)) })))
)

describe("SqlTaskJournal", () => {
  it.effect("a database it cannot write: JournalError naming what it could not do", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const file = Path.join(dir, "journal.sqlite")
      Fs.writeFileSync(file, "")
      const error = yield* Effect.flip(
        Effect.provide(TaskJournal.TaskJournal, SqlTaskJournal.layer.pipe(Layer.provide(SqliteClient.layer({ filename: file, readonly: true, disableWAL: true }))))
      )
      expect(error).toMatchObject({ _tag: "JournalError", message: expect.stringMatching(/could not create its tables/) })
    }))

  // Effect 4 memoizes a layer by reference across nested provides: the same
  // layer over another database must be a journal in that database.
  it.effect("provided inside another over another database, it is that database's journal", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDirectory
      const over = (name: string) => SqlTaskJournal.layer.pipe(Layer.provide(SqliteClient.layer({ filename: Path.join(dir, name) })))
      const list = Effect.flatMap(TaskJournal.TaskJournal, (journal) => journal.list)
      const [inner, outer] = yield* Effect.gen(function*() {
        const journal = yield* TaskJournal.TaskJournal
        yield* journal.record({ taskId: "t1", model: "video-1", prompt: "a fox", submittedAt: 0 })
        return [yield* Effect.provide(list, over("b.sqlite")), yield* journal.list] as const
      }).pipe(Effect.provide(over("a.sqlite")))
      expect(inner).toEqual([])
      expect(outer.map((entry) => entry.taskId)).toEqual(["t1"])
    }))
})
