/**
 * A private Postgres for a test: `initdb` into a temporary directory as the
 * `postgres` user (initdb refuses root), `pg_ctl` on its own port and socket
 * directory on 127.0.0.1, stopped and removed by `stop`. Fails loudly when
 * Debian's postgresql is not installed: the fleet tests never skip.
 */
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
  /** The server's log so far (every statement with `logStatements`). */
  readonly log: () => string
  readonly stop: () => void
}

const asPostgres = (command: string, args: ReadonlyArray<string>, password?: string) => {
  const root = process.getuid?.() === 0
  execFileSync(root ? "runuser" : Path.join(bin, command), root ? ["-u", "postgres", "--", Path.join(bin, command), ...args] : args, {
    stdio: "pipe",
    env: password === undefined ? process.env : { ...process.env, PGPASSWORD: password }
  })
}

/**
 * `port` must be outside the ephemeral range (32768–60999), like the
 * runners'. `logStatements` logs every statement, to check what runners ask.
 * With `password`, the `postgres` user must give it (scram-sha-256), and the
 * URLs of `database` hold it.
 */
export const startPostgres = (
  port: number,
  options: { readonly logStatements?: boolean; readonly password?: string } = {}
): Postgres => {
  if (!Fs.existsSync(Path.join(bin, "initdb"))) {
    throw new Error(`no Postgres at ${bin}: install Debian's postgresql (apt-get install -y postgresql), as .ci/run does`)
  }
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-pg-"))
  Fs.chmodSync(dir, 0o777)
  const data = Path.join(dir, "data")
  const log = Path.join(dir, "log")
  const settings = `-p ${port} -k ${dir} -h 127.0.0.1 -c fsync=off -c max_connections=200${
    options.logStatements ? " -c log_statement=all" : ""
  }`
  const { password } = options
  const pwfile = Path.join(dir, "pwfile")
  if (password !== undefined) Fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o644 })
  asPostgres("initdb", [
    "-D",
    data,
    "-U",
    "postgres",
    "--no-sync",
    ...(password === undefined ? ["-A", "trust"] : ["-A", "scram-sha-256", `--pwfile=${pwfile}`])
  ])
  asPostgres("pg_ctl", ["-D", data, "-o", settings, "-w", "-l", log, "start"])
  const user = password === undefined ? "postgres" : `postgres:${encodeURIComponent(password)}`
  return {
    database: (name) => {
      asPostgres("createdb", ["-h", dir, "-p", String(port), name], password)
      return `postgres://${user}@127.0.0.1:${port}/${name}`
    },
    log: () => Fs.readFileSync(log, "utf8"),
    stop: () => {
      try {
        asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}
