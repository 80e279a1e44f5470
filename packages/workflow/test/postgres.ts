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
 * `effect/cluster`'s default group): the fleet has shared its shards out.
 * There is no event to wait on across processes, so this asks Postgres again
 * every 100 ms (the wait's length is never asserted).
 */
export const settled = (url: string, runners: number): Promise<void> =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const [row] = yield* sql<{ sessions: string; locks: string }>`
        SELECT count(DISTINCT pid) AS sessions, count(*) AS locks FROM pg_locks WHERE locktype = 'advisory' AND granted`
      return Number(row?.sessions) === runners && Number(row?.locks) === 300
    }).pipe(
      Effect.repeat({ until: (done) => done, schedule: Schedule.spaced("100 millis") }),
      Effect.asVoid,
      Effect.scoped,
      Effect.provide(PgClient.layer({ url: Redacted.make(url) })),
      Effect.orDie
    )
  )
