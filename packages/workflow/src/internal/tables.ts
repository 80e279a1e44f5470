/**
 * Our tables, created at start-up by whichever process comes first. On
 * Postgres, two sessions' `CREATE TABLE IF NOT EXISTS` of one new table race:
 * the loser fails on a catalog index (`pg_type_typname_nsp_index`), not with
 * "already exists", so a fleet starting together lost a process (seen with
 * three processes sharing a pacer). There the statements run in one
 * transaction holding an advisory lock named after the table, as effect's
 * own SQL event journal does. sqlite takes one writer at a time already.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** Runs `statements` (each a `CREATE … IF NOT EXISTS`) once no other process is creating `table`. */
export const createTables = (
  sql: SqlClient.SqlClient,
  table: string,
  statements: ReadonlyArray<Effect.Effect<unknown, SqlError>>
): Effect.Effect<void, SqlError> => {
  const all = Effect.forEach(statements, (statement) => statement, { discard: true })
  return sql.onDialectOrElse({
    pg: () => sql.withTransaction(Effect.andThen(sql`SELECT pg_advisory_xact_lock(hashtext(${`switchboard:${table}`}))`, all)),
    orElse: () => all
  })
}
