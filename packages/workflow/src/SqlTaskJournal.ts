/**
 * A `TaskJournal` in SQL (`@effect/sql`: sqlite or Postgres), for the plain
 * `Videos` API shared by many processes without workflows: one row per task,
 * and claims with an expiry so that each pending task is polled by one
 * process at a time (`SELECT … FOR UPDATE SKIP LOCKED` on Postgres).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { JournalError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"

const table = "switchboard_video_tasks"

interface Row {
  readonly task_id: string
  readonly model: string
  readonly prompt: string
  readonly submitted_at: number | string
}

const entryOf = (row: Row): TaskJournal.Entry => ({
  taskId: row.task_id,
  model: row.model,
  prompt: row.prompt,
  // Postgres gives BIGINT as a string.
  submittedAt: Number(row.submitted_at)
})

const journalError = (action: string) => (cause: { readonly message: string }) =>
  new JournalError({ message: `SQL task journal could not ${action}: ${cause.message}` })

/**
 * Claims on a journal's tasks: the pending tasks this owner may poll now.
 *
 * @since 0.1.0
 * @category models
 */
export interface Claims {
  /**
   * Claims up to `limit` tasks that nobody holds (or whose claim expired,
   * or that `owner` holds already) until `ttl` from now, oldest first.
   */
  readonly claim: (options: {
    readonly owner: string
    readonly ttl: Duration.DurationInput
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<TaskJournal.Entry>, JournalError>
  /** Gives a claim up before it expires. */
  readonly release: (taskId: string, owner: string) => Effect.Effect<void, JournalError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class SqlTaskClaims extends Context.Tag("@switchboard/workflow/SqlTaskClaims")<SqlTaskClaims, Claims>() {}

/**
 * Creates the table if needed and builds the journal and its claims on the
 * `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
    task_id TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    submitted_at BIGINT NOT NULL,
    claimed_by TEXT,
    claimed_until BIGINT
  )`.pipe(Effect.mapError(journalError("create its table")))

  const list = sql<Row>`SELECT task_id, model, prompt, submitted_at FROM ${sql(table)} ORDER BY submitted_at, task_id`.pipe(
    Effect.map((rows) => rows.map(entryOf)),
    Effect.mapError(journalError("be read"))
  )
  // This journal's own claims (`TaskJournal.claim`), renewed while held.
  const owner = TaskJournal.randomId()
  const takeClaim = (taskId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql<Row>`UPDATE ${sql(table)} SET claimed_by = ${owner}, claimed_until = ${now + Duration.toMillis(TaskJournal.claimTtl)}
        WHERE task_id = ${taskId} AND (claimed_until IS NULL OR claimed_until < ${now} OR claimed_by = ${owner})
        RETURNING task_id, model, prompt, submitted_at`).pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.mapError(journalError(`claim task ${taskId}`))
      )
  const releaseClaim = (taskId: string) =>
    sql`UPDATE ${sql(table)} SET claimed_by = NULL, claimed_until = NULL WHERE task_id = ${taskId} AND claimed_by = ${owner}`
      .pipe(Effect.asVoid, Effect.mapError(journalError(`release task ${taskId}`)))

  const journal = TaskJournal.TaskJournal.of({
    // Reading the table shows it is there and reachable before a paid submission.
    check: Effect.asVoid(sql`SELECT 1 FROM ${sql(table)} LIMIT 1`.pipe(Effect.mapError(journalError("be checked")))),
    get: (taskId) => Effect.map(list, (entries) => Option.fromNullable(entries.find((e) => e.taskId === taskId))),
    scan: Effect.map(list, (entries) => ({ entries, quarantined: [] })),
    claim: (taskId) =>
      Effect.gen(function*() {
        // A task not in the table yet (just submitted) is not contended: it is this process's.
        const taken = yield* Effect.acquireRelease(takeClaim(taskId), () => Effect.ignore(releaseClaim(taskId)))
        const exists = Option.isSome(Option.fromNullable((yield* list).find((e) => e.taskId === taskId)))
        if (taken) {
          yield* Effect.forkScoped(Effect.interruptible(Effect.ignore(Effect.repeat(takeClaim(taskId), Schedule.spaced("40 seconds")))))
        }
        return taken || !exists
      }),
    record: (entry) =>
      sql`INSERT INTO ${sql(table)} (task_id, model, prompt, submitted_at)
        VALUES (${entry.taskId}, ${entry.model}, ${entry.prompt}, ${entry.submittedAt})
        ON CONFLICT (task_id) DO UPDATE SET model = ${entry.model}, prompt = ${entry.prompt}, submitted_at = ${entry.submittedAt}`
        .pipe(Effect.asVoid, Effect.mapError(journalError(`record task ${entry.taskId}`))),
    remove: (taskId) =>
      sql`DELETE FROM ${sql(table)} WHERE task_id = ${taskId}`.pipe(
        Effect.asVoid,
        Effect.mapError(journalError(`remove task ${taskId}`))
      ),
    list
  })

  const claims = SqlTaskClaims.of({
    claim: ({ limit, owner, ttl }) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const free = sql`(claimed_until IS NULL OR claimed_until < ${now} OR claimed_by = ${owner})`
        // Postgres: concurrent claimers skip each other's rows instead of
        // waiting; sqlite has one writer at a time, so a plain subquery is enough.
        const candidates = sql.onDialectOrElse({
          pg: () =>
            sql`SELECT task_id FROM ${sql(table)} WHERE ${free} ORDER BY submitted_at, task_id LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
          orElse: () => sql`SELECT task_id FROM ${sql(table)} WHERE ${free} ORDER BY submitted_at, task_id LIMIT ${limit}`
        })
        return sql<Row>`UPDATE ${sql(table)} SET claimed_by = ${owner}, claimed_until = ${now + Duration.toMillis(ttl)}
          WHERE task_id IN (${candidates})
          RETURNING task_id, model, prompt, submitted_at`.pipe(
          Effect.map((rows) => rows.map(entryOf).sort((a, b) => a.submittedAt - b.submittedAt || a.taskId.localeCompare(b.taskId)))
        )
      }).pipe(Effect.mapError(journalError("claim tasks"))),
    release: (taskId, owner) =>
      sql`UPDATE ${sql(table)} SET claimed_by = NULL, claimed_until = NULL WHERE task_id = ${taskId} AND claimed_by = ${owner}`
        .pipe(Effect.asVoid, Effect.mapError(journalError(`release task ${taskId}`)))
  })

  return { journal, claims }
})

/**
 * The journal and its claims over the `SqlClient` in context (e.g.
 * `SqliteClient.layer({ filename })` or `PgClient.layer({ url })`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<TaskJournal.TaskJournal | SqlTaskClaims, JournalError, SqlClient.SqlClient> = Layer
  .effectContext(
    Effect.map(make, ({ claims, journal }) => Context.make(TaskJournal.TaskJournal, journal).pipe(Context.add(SqlTaskClaims, claims)))
  )
