/**
 * A `TaskJournal` in SQL (`effect/sql`: sqlite or Postgres), for the plain
 * `Videos` API shared by many processes, on many machines, without
 * workflows. It keeps the directory journal's promises: one row per task
 * holding the whole record (as JSON, so nothing the record holds is lost);
 * a record that cannot be read is moved to a quarantine table, out of the
 * way of the others; and a process claims a task before it follows it, so
 * that each task is polled by one process at a time. A claim names its
 * owner (id, pid, host, process table) and expires unless renewed; an
 * expired claim, or one of a process of this process table that is gone, is
 * taken over.
 *
 * A claim is decided in a transaction on the task's row: on Postgres the row
 * is locked with `SELECT … FOR UPDATE SKIP LOCKED` (a claimer finding it
 * locked leaves the task to the one deciding); on sqlite the transaction
 * starts with a write, which takes the database's one write lock, so claims
 * are decided one at a time.
 *
 * @since 0.1.0
 */
import { JournalError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import { isAlive, makeOwner } from "@switchboard/node/NodeTaskJournal"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { createTables } from "./internal/tables.js"
import * as Crypto from "node:crypto"

/**
 * The journal's table, and where unreadable records go.
 *
 * @since 0.1.0
 * @category constants
 */
export const tables = { tasks: "switchboard_task_journal", quarantine: "switchboard_task_journal_quarantine" } as const

interface Row {
  readonly task_id: string
  /** The record (`TaskJournal.Entry` as JSON); null while the task is claimed but not yet recorded. */
  readonly record: string | null
  /** The claim (`TaskJournal.Claim` as JSON); null when nobody holds the task. */
  readonly claim: string | null
}

/** At most this many UTF-8 bytes in a key: Postgres refuses index entries past about 2700. */
const maxKeyBytes = 1000

/**
 * The `task_id` of a task: the id itself when any database keeps it as it
 * is; else (a lone surrogate, which drivers turn into U+FFFD so that two ids
 * would share a row; a control character, NUL included, which Postgres
 * refuses; a very long id) `\u0001sha256:<hex>`, which no id kept as it is
 * can be (no control characters). The record keeps the whole id.
 *
 * @since 0.1.0
 * @category keys
 */
export const keyOf = (taskId: string): string =>
  /[\p{Surrogate}\p{Cc}]/u.test(taskId) || Buffer.byteLength(taskId) > maxKeyBytes
    ? `\u0001sha256:${Crypto.createHash("sha256").update(Buffer.from(JSON.stringify(taskId))).digest("hex")}`
    : taskId

const journalError = (action: string) => (cause: SqlError) => {
  const error = TaskJournal.failure(action)(cause)
  return new JournalError({ ...error, message: `SQL ${error.message}` })
}

let reservations = 0

/**
 * Creates the tables if needed and builds the journal on the `SqlClient` in
 * context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<TaskJournal.Service, JournalError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tasks = sql(tables.tasks)
  const quarantine = sql(tables.quarantine)
  yield* createTables(sql, tables.tasks, [
    sql`CREATE TABLE IF NOT EXISTS ${tasks} (
      task_id TEXT PRIMARY KEY,
      record TEXT,
      submitted_at BIGINT,
      claimed_by TEXT,
      claim TEXT
    )`,
    sql`CREATE TABLE IF NOT EXISTS ${quarantine} (
      id TEXT PRIMARY KEY,
      task_id TEXT NOT NULL,
      record TEXT NOT NULL,
      message TEXT NOT NULL,
      moved_at BIGINT NOT NULL
    )`
  ]).pipe(
    Effect.mapError(journalError("create its tables"))
  )

  const owner = makeOwner()

  const record = (entry: TaskJournal.Entry) =>
    sql`INSERT INTO ${tasks} (task_id, record, submitted_at) VALUES (${keyOf(entry.taskId)}, ${TaskJournal.encodeRecord(entry)}, ${entry.submittedAt})
      ON CONFLICT (task_id) DO UPDATE SET record = excluded.record, submitted_at = excluded.submitted_at`.pipe(
      Effect.asVoid,
      Effect.mapError(journalError(`record task ${entry.taskId}`))
    )

  const get = (taskId: string) =>
    sql<Row>`SELECT task_id, record, claim FROM ${tasks} WHERE task_id = ${keyOf(taskId)}`.pipe(
      Effect.map((rows) => Option.flatMap(Option.fromNullishOr(rows[0]?.record), (text) => Result.getSuccess(TaskJournal.decodeRecord(text)))),
      Effect.mapError(journalError(`read task ${taskId}`))
    )

  /** Moves a record that cannot be decoded to the quarantine table, unless it changed meanwhile. */
  const setAside = (row: Row & { readonly record: string }, message: string) =>
    Effect.gen(function*() {
      const id = `${row.task_id}.${TaskJournal.randomId()}`
      const now = yield* Clock.currentTimeMillis
      const moved = yield* sql`DELETE FROM ${tasks} WHERE task_id = ${row.task_id} AND record = ${row.record} RETURNING task_id`
      if (moved.length > 0) {
        yield* sql`INSERT INTO ${quarantine} (id, task_id, record, message, moved_at) VALUES (${id}, ${row.task_id}, ${row.record}, ${message}, ${now})`
      }
      return { key: row.task_id, movedTo: `${tables.quarantine} id ${id}`, message } satisfies TaskJournal.Quarantined
    }).pipe(sql.withTransaction, Effect.mapError(journalError(`set task ${row.task_id} aside`)))

  /** A row claimed by a process that died before recording its task: dropped unless its claim changed. */
  const dropOrphan = (row: Row) =>
    row.claim === null
      ? sql`DELETE FROM ${tasks} WHERE task_id = ${row.task_id} AND record IS NULL AND claim IS NULL`
      : sql`DELETE FROM ${tasks} WHERE task_id = ${row.task_id} AND record IS NULL AND claim = ${row.claim}`

  const scan = Effect.gen(function*() {
    const rows = yield* sql<Row>`SELECT task_id, record, claim FROM ${tasks}`.pipe(Effect.mapError(journalError("be read")))
    const now = yield* Clock.currentTimeMillis
    const entries: Array<TaskJournal.Entry> = []
    const quarantined: Array<TaskJournal.Quarantined> = []
    for (const row of rows) {
      if (row.record === null) {
        const held = row.claim === null ? Option.none() : TaskJournal.liveHolder(row.claim, now, isAlive)
        if (Option.isNone(held)) yield* Effect.mapError(dropOrphan(row), journalError(`drop the claim on ${row.task_id}`))
        continue
      }
      const decoded = TaskJournal.decodeRecord(row.record)
      if (Result.isSuccess(decoded)) entries.push(decoded.success)
      else quarantined.push(yield* setAside({ ...row, record: row.record }, decoded.failure))
    }
    return { entries: entries.sort((a, b) => a.submittedAt - b.submittedAt), quarantined } satisfies TaskJournal.Listing
  })

  /** The row of `taskId`, locked for this transaction; none on Postgres when another transaction holds it. */
  const lockRow = (taskId: string) =>
    sql.onDialectOrElse({
      pg: () => sql<Row>`SELECT task_id, record, claim FROM ${tasks} WHERE task_id = ${keyOf(taskId)} FOR UPDATE SKIP LOCKED`,
      orElse: () => sql<Row>`SELECT task_id, record, claim FROM ${tasks} WHERE task_id = ${keyOf(taskId)}`
    })

  const tryClaim = (taskId: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      // A write first: the row exists (a task is claimed before it is
      // recorded), and on sqlite this transaction now holds the write lock.
      yield* sql`INSERT INTO ${tasks} (task_id) VALUES (${keyOf(taskId)}) ON CONFLICT (task_id) DO NOTHING`
      const [row] = yield* lockRow(taskId)
      if (row === undefined) return false
      const holder = row.claim === null ? Option.none() : TaskJournal.liveHolder(row.claim, now, isAlive)
      if (Option.isSome(holder) && holder.value.id !== owner.id) return false
      yield* sql`UPDATE ${tasks} SET claimed_by = ${owner.id}, claim = ${TaskJournal.claimOf(owner, now)} WHERE task_id = ${keyOf(taskId)}`
      return true
    }).pipe(sql.withTransaction, Effect.mapError(journalError(`claim task ${taskId}`)))

  /** Extends this process's claim; a claim taken over meanwhile stays with its new holder. */
  const renew = (taskId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql`UPDATE ${tasks} SET claim = ${TaskJournal.claimOf(owner, now)} WHERE task_id = ${keyOf(taskId)} AND claimed_by = ${owner.id}`)

  const release = (taskId: string) =>
    sql`UPDATE ${tasks} SET claimed_by = NULL, claim = NULL WHERE task_id = ${keyOf(taskId)} AND claimed_by = ${owner.id}`.pipe(
      Effect.andThen(sql`DELETE FROM ${tasks} WHERE task_id = ${keyOf(taskId)} AND record IS NULL AND claim IS NULL`),
      Effect.mapError(journalError(`release task ${taskId}`))
    )

  const claim = (taskId: string): Effect.Effect<boolean, JournalError, Scope.Scope> =>
    Effect.gen(function*() {
      const taken = yield* Effect.acquireRelease(tryClaim(taskId), (taken) => (taken ? Effect.ignore(release(taskId)) : Effect.void))
      if (taken) yield* TaskJournal.keepRenewed(taskId, renew(taskId))
      return taken
    })

  /**
   * A row of the record's full size, before anything is paid for: fails on
   * a read-only or full database. It holds a live claim (padded to size), so
   * `scan` leaves it while this process runs and drops it after. The record
   * replaces it in one transaction.
   */
  const reserve = (draft: TaskJournal.Draft) =>
    Effect.gen(function*() {
      // A control character: no task id kept as it is has one (`keyOf`).
      const key = `\u0002reserve:${owner.id}:${++reservations}`
      const now = yield* Clock.currentTimeMillis
      const held = TaskJournal.claimOf(owner, now).padEnd(TaskJournal.reservedSize(draft))
      const drop = sql`DELETE FROM ${tasks} WHERE task_id = ${key}`
      yield* Effect.acquireRelease(
        Effect.mapError(sql`INSERT INTO ${tasks} (task_id, claim) VALUES (${key}, ${held})`, journalError("be written")),
        () => Effect.ignore(drop)
      )
      return {
        record: (entry: TaskJournal.Entry) =>
          Effect.andThen(drop, record(entry)).pipe(
            sql.withTransaction,
            Effect.mapError((e) => (e instanceof JournalError ? e : journalError(`record task ${entry.taskId}`)(e)))
          )
      } satisfies TaskJournal.Reservation
    })

  return TaskJournal.TaskJournal.of({
    reserve,
    record,
    get,
    remove: (taskId) =>
      sql`DELETE FROM ${tasks} WHERE task_id = ${keyOf(taskId)}`.pipe(Effect.asVoid, Effect.mapError(journalError(`remove task ${taskId}`))),
    scan,
    list: Effect.map(scan, (listing) => listing.entries),
    claim
  })
})

/**
 * The journal over the `SqlClient` in context (e.g.
 * this package's `SqliteClient.layer({ filename })` or `PgClient.layer({ url })`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<TaskJournal.TaskJournal, JournalError, SqlClient.SqlClient> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(TaskJournal.TaskJournal, make))
