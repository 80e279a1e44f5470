/**
 * `UiServer.ApprovalStore` in SQL (`effect/sql`: sqlite or Postgres): the
 * runs paused for approval are kept where every server of a fleet finds
 * them, so the request with the user's answer may reach another server than
 * the one that asked. One row per chat key, the paused run as JSON, decoded
 * with its schema when taken; `take` deletes the row it read, and only that
 * row, so one answer resumes a run once however many servers receive it.
 *
 * @since 1.1.0
 */
import { UiServer } from "@switchboard/agent"
import { Transcript } from "@switchboard/agent/Transcript"
import * as Protocol from "@switchboard/core/Protocol"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { createTables } from "./internal/tables.js"
import { keyOf } from "./SqlTaskJournal.js"

/**
 * The table that holds each chat's paused run (one row per chat).
 *
 * @since 1.1.0
 * @category constants
 */
export const table = "switchboard_ui_approvals"

const Paused = Schema.fromJsonString(Schema.Struct({
  transcript: Transcript,
  usage: Protocol.Usage,
  trace: Schema.Struct({ traceId: Schema.String, spanId: Schema.String }),
  pending: Schema.Array(Schema.String)
}))

const encode = Schema.encodeSync(Paused)
const decode = Schema.decodeUnknownResult(Paused)

/** The store's functions have no error channel: a database failure ends the response with its generic `error` part. */
const orDie = <A>(effect: Effect.Effect<A, SqlError>) => Effect.orDie(effect)

/**
 * Creates the table if needed and builds the store on the `SqlClient` in
 * context.
 *
 * @since 1.1.0
 * @category constructors
 */
export const make: Effect.Effect<UiServer.ApprovalStore["Service"], SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* createTables(sql, table, [sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (chat_key TEXT PRIMARY KEY, paused TEXT NOT NULL)`])
  return {
    put: (chatId, paused) => {
      const row = { chat_key: keyOf(chatId), paused: encode(paused) }
      return orDie(
        sql`INSERT INTO ${sql(table)} ${sql.insert(row)} ON CONFLICT (chat_key) DO UPDATE SET paused = ${row.paused}`
      ).pipe(Effect.asVoid)
    },
    take: (chatId, approvalIds) =>
      orDie(Effect.gen(function*() {
        const key = keyOf(chatId)
        const rows = yield* sql<{ readonly paused: string }>`SELECT paused FROM ${sql(table)} WHERE chat_key = ${key}`
        const stored = rows[0]?.paused
        if (stored === undefined) return undefined
        // What was stored is decoded before use; a row that does not decode answers nothing.
        const paused = decode(stored)
        if (Result.isFailure(paused) || !approvalIds.every((id) => paused.success.pending.includes(id))) return undefined
        // Deleted only as read: of two servers taking it at once, one gets it.
        const taken = yield* sql`DELETE FROM ${sql(table)} WHERE chat_key = ${key} AND paused = ${stored} RETURNING chat_key`
        return taken.length === 1 ? paused.success : undefined
      }))
  }
})

/**
 * `UiServer.ApprovalStore` in SQL, for the servers of a page behind a load
 * balancer: a paused run is resumed once, by whichever server gets the answer.
 *
 * @since 1.1.0
 * @category layers
 */
export const layer: Layer.Layer<UiServer.ApprovalStore, SqlError, SqlClient.SqlClient> = Layer.effect(
  UiServer.ApprovalStore,
  make
)
