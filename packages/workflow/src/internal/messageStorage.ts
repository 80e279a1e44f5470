/**
 * effect/cluster's SQL message storage (`SqlMessageStorage`), with a stored
 * message that cannot be read set aside instead of stalling the runner.
 *
 * `SqlMessageStorage` turns rows into envelopes with `JSON.parse`. One row
 * whose payload, headers or last reply does not parse throws in the middle of
 * a read, after the read claimed its batch (for ten minutes): the runner's
 * storage read loop logs "Could not read messages from storage" and delivers
 * nothing, to any entity, read after read. (A row that parses but does not
 * decode is already answered with a defect by effect's `MessageStorage`.)
 *
 * Here a read that fails looks for the rows it was about that do not parse,
 * and sets each aside: copied to `quarantineTable` with the reason, answered
 * with a defect (so the workflow ends, its result says why, and no read
 * returns the row again), logged with its id and counted
 * (`switchboard_workflow_messages_set_aside`). Then it releases the batch's
 * claims and reads again: the other workflows go on.
 */
import * as Cause from "effect/Cause"
import * as MessageStorage from "effect/cluster/MessageStorage"
import * as Reply from "effect/cluster/Reply"
import type * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Snowflake from "effect/cluster/Snowflake"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import type * as Digest from "effect/crypto/Digest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { createTables } from "./tables.js"
import * as Workflow from "effect/workflow/Workflow"

/**
 * Where set-aside messages are kept: the row's text as it was, and why it
 * could not be read.
 */
export const quarantineTable = "switchboard_workflow_quarantine"

/** The defect a set-aside request is answered with. */
const setAsideDefect = (row: Row, reason: string) =>
  `stored message ${row.id} (${row.entity_type} ${row.entity_id}) could not be read and was set aside in ${quarantineTable}: ${reason}`

/**
 * Whether a workflow's defect is the answer to its stored message having been
 * set aside (its run ended there), rather than a failure to reach storage.
 */
export const isSetAside = (defect: unknown): boolean =>
  typeof defect === "string" && defect.startsWith("stored message ") && defect.includes(` was set aside in ${quarantineTable}: `)

/**
 * A workflow's `poll`, where a run that ended on a set-aside message is
 * `Complete` with that defect: effect/workflow's `poll` dies with it.
 */
export const pollSettled = <A, E, R>(
  poll: Effect.Effect<Option.Option<Workflow.Result<A, E>>, never, R>
): Effect.Effect<Option.Option<Workflow.Result<A, E>>, never, R> =>
  Effect.catchDefect(poll, (defect) =>
    isSetAside(defect)
      ? Effect.succeed(Option.some<Workflow.Result<A, E>>(new Workflow.Complete({ exit: Exit.die(defect) })))
      : Effect.die(defect))

/** effect/cluster's tables (its default prefix `cluster`). */
const tables = { messages: "cluster_messages", replies: "cluster_replies" } as const

/** How many stored messages this process has set aside. */
export const setAsideCount = Metric.counter("switchboard_workflow_messages_set_aside", {
  description: "Stored workflow messages that could not be read, set aside",
  incremental: true
})

interface Row {
  readonly id: string
  readonly entity_type: string
  readonly entity_id: string
  readonly payload: string | null
  readonly headers: string | null
  readonly reply_payload: string | null
}

/** Why a row cannot be read (the column and the parser's complaint, shortened), or undefined when it can. */
const unreadable = (row: Row): string | undefined => {
  for (const column of ["payload", "headers", "reply_payload"] as const) {
    const text = row[column]
    // Requests have a payload and headers; other envelopes (acks, interrupts) have neither.
    if (text === null) continue
    try {
      JSON.parse(text)
    } catch (error) {
      return `${column === "reply_payload" ? "its last reply" : column} is not JSON (${String(error).slice(0, 160)})`
    }
  }
  return undefined
}

const make = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const snowflakes = yield* Snowflake.Generator
  const base = yield* Effect.flatMap(SqlMessageStorage.makeEncodedStorage(), MessageStorage.makeEncoded)

  const createQuarantine = sql`CREATE TABLE IF NOT EXISTS ${sql(quarantineTable)} (
    id TEXT PRIMARY KEY,
    entity_type TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    payload TEXT,
    headers TEXT,
    reason TEXT NOT NULL,
    moved_at BIGINT NOT NULL
  )`

  const setAside = (row: Row, reason: string) =>
    Effect.gen(function*() {
      yield* sql`INSERT INTO ${sql(quarantineTable)} ${
        sql.insert({
          id: row.id,
          entity_type: row.entity_type,
          entity_id: row.entity_id,
          payload: row.payload,
          headers: row.headers,
          reason,
          moved_at: Date.now()
        })
      } ON CONFLICT (id) DO NOTHING`
      // The answer marks the request processed: no read returns it again.
      yield* base.saveReply(Reply.ReplyWithContext.fromDefect({
        id: snowflakes.nextUnsafe(),
        requestId: Snowflake.Snowflake(row.id),
        defect: setAsideDefect(row, reason)
      }))
      yield* Metric.update(setAsideCount, 1)
      yield* Effect.logError(`Set aside stored message ${row.id} of ${row.entity_type} ${row.entity_id}: ${reason}`).pipe(
        Effect.annotateLogs({ messageId: row.id, entityType: row.entity_type, entityId: row.entity_id, reason })
      )
    })

  /** Sets aside the unprocessed messages `where` selects that cannot be read; how many. */
  const sweep = (where: Statement.Fragment) =>
    Effect.gen(function*() {
      const rows = yield* sql<Row>`
        SELECT CAST(m.id AS TEXT) AS id, m.entity_type, m.entity_id, m.payload, m.headers, r.payload AS reply_payload
        FROM ${sql(tables.messages)} m LEFT JOIN ${sql(tables.replies)} r ON r.id = m.last_reply_id
        WHERE NOT m.processed AND ${where}`
      const bad = rows.flatMap((row) => {
        const reason = unreadable(row)
        return reason === undefined ? [] : [{ row, reason }]
      })
      if (bad.length > 0) yield* createTables(sql, quarantineTable, [createQuarantine])
      yield* Effect.forEach(bad, ({ reason, row }) => setAside(row, reason), { discard: true })
      return bad.length
    })

  /**
   * `read`; when it fails, the unreadable rows set aside, `release` (the
   * claims the failed read left), and `read` once more. When nothing was set
   * aside, the first failure stands.
   */
  const guarded = <A, E>(read: Effect.Effect<A, E>, where: Statement.Fragment, release: Effect.Effect<void, unknown>) =>
    Effect.catchCause(read, (cause) => {
      // effect's driver says a row that does not parse as a PersistenceError (or dies):
      // any failure but an interruption is looked into.
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
      return Effect.flatMap(Effect.exit(sweep(where)), (swept) => {
        if (swept._tag === "Failure" || swept.value === 0) return Effect.failCause(cause)
        return Effect.andThen(Effect.ignore(release), read)
      })
    })

  return MessageStorage.MessageStorage.of({
    ...base,
    unprocessedMessages: (shardIds, options) => {
      const shards = Array.from(shardIds)
      if (shards.length === 0) return base.unprocessedMessages(shards, options)
      return guarded(base.unprocessedMessages(shards, options), sql.in("m.shard_id", shards.map(String)), base.resetShards(shards))
    },
    unprocessedMessagesById: (messageIds) => {
      const ids = Array.from(messageIds)
      // A read by id claims nothing: nothing to release.
      return ids.length === 0
        ? base.unprocessedMessagesById(ids)
        : guarded(base.unprocessedMessagesById(ids), sql.in("m.id", ids.map(String)), Effect.void)
    }
  })
})

/**
 * `SqlMessageStorage.layer` (the `cluster` tables, migrated first), with
 * unreadable messages set aside.
 */
export const layer: Layer.Layer<
  MessageStorage.MessageStorage,
  never,
  SqlClient.SqlClient | ShardingConfig.ShardingConfig | Digest.Digest
> = Layer.effect(MessageStorage.MessageStorage, make).pipe(
  Layer.provide([Snowflake.layerGenerator, SqlMessageStorage.layerMigrations({})])
)
