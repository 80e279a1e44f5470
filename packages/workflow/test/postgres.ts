/**
 * The fleet tests' Postgres (`@switchboard/test-support/Postgres`), and a wait for
 * the runners to share its shards out.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"

export { type Postgres, startPostgres } from "@switchboard/test-support/Postgres"

/**
 * Resolves once `runners` sessions hold every shard's advisory lock (300 in
 * `effect/cluster`'s default group), each its share (the hash ring gives
 * each of n runners 300 / n, or one more): the fleet has shared its shards
 * out, its handovers are over. (Every lock held and the newcomer holding
 * some is not enough: the old owners may still hold shards assigned to it.)
 * There is no event to wait on across processes, so this asks Postgres
 * again every 100 ms (the wait's length is never asserted).
 */
export const settled = (url: string, runners: number): Promise<void> =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const rows = yield* sql<{ locks: string }>`
        SELECT count(*) AS locks FROM pg_locks WHERE locktype = 'advisory' AND granted GROUP BY pid`
      const locks = rows.map((row) => Number(row.locks))
      const share = Math.floor(300 / runners)
      return locks.length === runners && locks.reduce((a, b) => a + b, 0) === 300 &&
        locks.every((n) => n === share || n === share + 1)
    }).pipe(
      Effect.repeat({ until: (done) => done, schedule: Schedule.spaced("100 millis") }),
      Effect.asVoid,
      Effect.scoped,
      Effect.provide(PgClient.layer({ url: Redacted.make(url) })),
      Effect.orDie
    )
  )
