/**
 * Pacing from the rate limits (`@switchboard/core/Pacing`) for a fleet: the
 * budget that the latest replies announced, kept in one SQL row per key
 * (`effect/sql`: sqlite or Postgres), so that every process sharing a key
 * holds its calls while the budget is spent instead of sending them into a
 * 429. Each step (reserve, record, release) is one transaction on the row:
 * `SELECT … FOR UPDATE` on Postgres; on sqlite the transaction starts with
 * a write, which takes the database's one write lock.
 *
 * The row is the database's to give, not to trust: one that does not
 * decode is started afresh. A process that died with requests in flight
 * would leave them counted: counts untouched for `staleAfter` are dropped.
 * A database that cannot be used does not stop calls: they go unpaced, with
 * a warning logged.
 *
 * @since 1.1.0
 */
import * as Pacing from "@switchboard/core/Pacing"
import type * as ResponseMetadata from "@switchboard/core/ResponseMetadata"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { createTables } from "./internal/tables.js"

/**
 * The table of budgets: one row per key name.
 *
 * @since 1.1.0
 * @category constants
 */
export const table = "switchboard_pacing"

/**
 * In-flight counts untouched this long are dropped (a request's default time
 * limit): their process is gone or their replies were lost.
 *
 * @since 1.1.0
 * @category constants
 */
export const staleAfter: Duration.Duration = Duration.minutes(1)

const Count = Schema.NullOr(Schema.Finite)
const Bucket = Schema.Struct({ limit: Count, remaining: Count, resetAt: Count })
const Stored = Schema.Struct({ requests: Bucket, tokens: Bucket, inFlight: Schema.Finite, heard: Schema.Boolean, touchedAt: Schema.Finite })
const decodeStored = Schema.decodeUnknownOption(Schema.fromJsonString(Stored))

const toBucket = (b: typeof Bucket.Type): Pacing.Bucket => ({
  limit: b.limit ?? undefined,
  remaining: b.remaining ?? undefined,
  resetAt: b.resetAt ?? undefined
})
const fromBucket = (b: Pacing.Bucket) => ({ limit: b.limit ?? null, remaining: b.remaining ?? null, resetAt: b.resetAt ?? null })

/** The stored state, or a fresh one for a row missing, unreadable, or with stale in-flight counts. */
const stateOf = (text: string | null | undefined, now: number): Pacing.State => {
  const stored = text == null ? undefined : decodeStored(text)
  if (stored === undefined || stored._tag === "None") return Pacing.emptyState()
  const { heard, inFlight, requests, tokens, touchedAt } = stored.value
  const stale = now - touchedAt > Duration.toMillis(staleAfter)
  return { requests: toBucket(requests), tokens: toBucket(tokens), inFlight: stale ? 0 : Math.max(0, inFlight), heard }
}

const encode = (state: Pacing.State, now: number) =>
  JSON.stringify({
    requests: fromBucket(state.requests),
    tokens: fromBucket(state.tokens),
    inFlight: state.inFlight,
    heard: state.heard,
    touchedAt: now
  })

/**
 * Creates the table if needed; the pacer of the budget `name` (one per key
 * the fleet shares) over the `SqlClient` in context.
 *
 * @since 1.1.0
 * @category constructors
 */
export const make = (name = "default"): Effect.Effect<Pacing.Pacer, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const budgets = sql(table)
    yield* createTables(sql, table, [sql`CREATE TABLE IF NOT EXISTS ${budgets} (name TEXT PRIMARY KEY, state TEXT)`])

    const lockRow = sql.onDialectOrElse({
      pg: () => sql<{ readonly state: string | null }>`SELECT state FROM ${budgets} WHERE name = ${name} FOR UPDATE`,
      orElse: () => sql<{ readonly state: string | null }>`SELECT state FROM ${budgets} WHERE name = ${name}`
    })

    /** Reads the row, applies `step` at `now`, writes it back: one transaction. */
    const update = <A>(what: string, now: number, step: (state: Pacing.State) => A, fallback: A): Effect.Effect<A> =>
      Effect.gen(function*() {
        // A write first: the row exists, and on sqlite this transaction now holds the write lock.
        yield* sql`INSERT INTO ${budgets} (name, state) VALUES (${name}, NULL) ON CONFLICT (name) DO NOTHING`
        const [row] = yield* lockRow
        const state = stateOf(row?.state, now)
        const out = step(state)
        yield* sql`UPDATE ${budgets} SET state = ${encode(state, now)} WHERE name = ${name}`
        return out
      }).pipe(
        sql.withTransaction,
        Effect.catch((error) =>
          Effect.as(Effect.logWarning(`SQL pacing could not ${what}; the call goes unpaced: ${error.message}`), fallback)
        )
      )

    return {
      reserve: (now) => update("reserve a request", now, (state) => Pacing.reserveIn(state, now), 0),
      record: (limits: ResponseMetadata.RateLimits, now) =>
        update("record a reply", now, (state) => Pacing.recordIn(state, limits, now), undefined),
      release: Effect.flatMap(
        Effect.clockWith((clock) => clock.currentTimeMillis),
        (now) => update("release a request", now, Pacing.releaseIn, undefined)
      )
    } satisfies Pacing.Pacer
  })

/**
 * Paces every call of the program it is provided to through the budget
 * `name` in SQL, shared with every process using the same database and name.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as NodeSwitchboard from "@switchboard/node/NodeSwitchboard"
 * import * as SqlPacer from "@switchboard/workflow/SqlPacer"
 * import { PgClient } from "@effect/sql-pg"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Redacted from "effect/Redacted"
 *
 * const program = Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] })
 * const url = Redacted.make("postgres://localhost/switchboard")
 * const paced = program.pipe(
 *   Effect.provide(SqlPacer.layer().pipe(Layer.provide(PgClient.layer({ url })))),
 *   Effect.provide(NodeSwitchboard.layerConfig())
 * )
 * ```
 * @since 1.1.0
 * @category layers
 */
export const layer = (name?: string): Layer.Layer<never, SqlError, SqlClient.SqlClient> =>
  Layer.unwrap(Effect.map(make(name), Pacing.layerPacer))
