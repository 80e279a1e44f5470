/**
 * A private Postgres for a test: `initdb` into a temporary directory as the
 * `postgres` user (initdb refuses root), `pg_ctl` on its own port and socket
 * directory on 127.0.0.1, stopped and removed at the end. Fails loudly when
 * Debian's postgresql is not installed: the fleet tests never skip.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** Debian's newest installed version (`/usr/lib/postgresql/<version>/bin`). */
const bin = process.env.POSTGRES_BIN ?? Path.join(
  "/usr/lib/postgresql",
  (Fs.existsSync("/usr/lib/postgresql") ? Fs.readdirSync("/usr/lib/postgresql") : []).sort((a, b) => Number(b) - Number(a))[0] ?? "15",
  "bin"
)

export interface Postgres {
  /** A new, empty database's URL. */
  readonly database: (name: string) => string
  readonly stop: () => void
}

const asPostgres = (command: string, args: ReadonlyArray<string>) => {
  const root = process.getuid?.() === 0
  execFileSync(root ? "runuser" : Path.join(bin, command), root ? ["-u", "postgres", "--", Path.join(bin, command), ...args] : args, {
    stdio: "pipe"
  })
}

/** `port` must be outside the ephemeral range, like the runners'. */
export const startPostgres = (port: number): Postgres => {
  if (!Fs.existsSync(Path.join(bin, "initdb"))) {
    throw new Error(`no Postgres at ${bin}: install Debian's postgresql (apt-get install -y postgresql), as .ci/run does`)
  }
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-pg-"))
  Fs.chmodSync(dir, 0o777)
  const data = Path.join(dir, "data")
  asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"])
  asPostgres("pg_ctl", ["-D", data, "-o", `-p ${port} -k ${dir} -h 127.0.0.1 -c fsync=off -c max_connections=200`, "-w", "-l", Path.join(dir, "log"), "start"])
  return {
    database: (name) => {
      asPostgres("createdb", ["-h", dir, "-p", String(port), name])
      return `postgres://postgres@127.0.0.1:${port}/${name}`
    },
    stop: () => {
      try {
        asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}

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
