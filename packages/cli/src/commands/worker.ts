/**
 * `switchboard worker --database <url>` (or `--database-file <path>`, or
 * `$SWITCHBOARD_DATABASE_URL`): a runner of the durable video
 * workflows (`@switchboard/workflow`), until Ctrl-C. On a sqlite file it is
 * the only runner; on Postgres, start one per machine (or more, each with its
 * own `--port`) and they share the work. The programs (this command's and
 * `switchboard video --database`'s) are in `Fleet.ts`, loaded when they run.
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Connection from "../Connection.js"
import * as Errors from "../Errors.js"
import type * as FleetModule from "../Fleet.js"
import * as Inputs from "../Inputs.js"

/**
 * The variable `switchboard worker` reads the database from when no flag
 * gives it: a password there stays out of the process list.
 *
 * @since 1.1.0
 * @category flags
 */
export const databaseVariable = "SWITCHBOARD_DATABASE_URL"

/**
 * `--database` and `--database-file`, shared with `switchboard video`.
 *
 * @since 1.1.0
 * @category flags
 */
export const databaseFlags = {
  database: Inputs.text("database").pipe(
    Flag.withMetavar("url"),
    Flag.optional,
    Flag.withDescription(
      `Run video tasks as durable workflows stored here: a sqlite file (sqlite:tasks.db) or postgres://… (worker: default $${databaseVariable}; a password here shows in the process list)`
    )
  ),
  databaseFile: Inputs.text("database-file").pipe(
    Flag.withMetavar("path"),
    Flag.optional,
    Flag.withDescription("Read the --database URL from this file's first line (keeps a password out of the process list)")
  )
}

/**
 * @since 1.1.0
 * @category flags
 */
export interface DatabaseFlags {
  readonly database: Option.Option<string>
  readonly databaseFile: Option.Option<string>
}

const usage = (message: string) => new Errors.UsageError({ message })

/**
 * The database the flags give: `--database`, else the first line of
 * `--database-file`, else (with `environment`) `$SWITCHBOARD_DATABASE_URL`;
 * `None` when nothing does. Kept `Redacted`: it may hold a password.
 *
 * @since 1.1.0
 * @category flags
 */
export const databaseOf = (
  flags: DatabaseFlags,
  environment: boolean
): Effect.Effect<Option.Option<Redacted.Redacted<string>>, Errors.UsageError, FileSystem.FileSystem> => {
  const given = Option.filter(flags.database, (url) => url.trim() !== "")
  if (Option.isSome(given) && Option.isSome(flags.databaseFile)) {
    return Effect.fail(usage("--database and --database-file give the database twice: pass one"))
  }
  if (Option.isSome(given)) return Effect.succeedSome(Redacted.make(given.value))
  if (Option.isSome(flags.databaseFile)) return Effect.asSome(Inputs.secretFile("database-file", flags.databaseFile.value))
  if (!environment) return Effect.succeedNone
  return Config.option(Config.Redacted(databaseVariable)).pipe(
    Effect.map(Option.filter((url) => Redacted.value(url).trim() !== "")),
    Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>())
  )
}

/** The worker's database, which it cannot run without. */
const requiredDatabase = (flags: DatabaseFlags) =>
  Effect.flatMap(databaseOf(flags, true), (database) =>
    Option.isSome(database)
      ? Effect.succeed(database.value)
      : Effect.fail(usage(`No database: pass --database <url> or --database-file <path>, or set ${databaseVariable}`)))

/**
 * The programs, loaded when a command needs them (`Fleet.ts`).
 *
 * @since 0.1.0
 * @category programs
 */
export const fleet: Effect.Effect<typeof FleetModule> = Effect.promise(() => import("../Fleet.js"))

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "worker",
  {
    ...databaseFlags,
    host: Inputs.text("host").pipe(Flag.optional, Flag.withDescription("Postgres fleet: the address other runners reach this one at (default 127.0.0.1)")),
    port: Inputs.integer("port", "port").pipe(Flag.optional, Flag.withDescription("Postgres fleet: this runner's port, outside 32768–60999 (default 24100)")),
    pollInterval: Inputs.duration("poll-interval", Inputs.minimumPollInterval).pipe(Flag.withMetavar("duration"), Flag.optional, Flag.withDescription("Fixed wait between status calls (default: 1 s doubling up to 15 s)")),
    timeout: Inputs.duration("timeout").pipe(Flag.withMetavar("duration"), Flag.optional, Flag.withDescription("A task's deadline from its submission (default 10m)")),
    healthCheckInterval: Inputs.duration("health-check-interval").pipe(
      Flag.optional,
      Flag.withDescription("Postgres fleet: how often a runner pings the others to find a dead one (default 5s)")
    ),
    shardLockExpiration: Inputs.duration("shard-lock-expiration").pipe(
      Flag.optional,
      Flag.withDescription("Postgres fleet: after this long without a heartbeat a runner is gone and its shards move; at least 3s (default 20s)")
    ),
    shardLockRefresh: Inputs.duration("shard-lock-refresh").pipe(
      Flag.optional,
      Flag.withDescription("Postgres fleet: how often a runner refreshes its shard locks, at most a third of the expiration (default 6s)")
    ),
    logLevel: Inputs.choice("log-level", ["debug", "info", "warning", "error", "none"]).pipe(
      Inputs.withDefault("warning", "Log lines of the cluster shown on stderr from this level up")
    ),
    ...Connection.flags
  },
  (flags) =>
    Connection.run(
      flags,
      Effect.flatMap(Effect.all([fleet, requiredDatabase(flags)]), ([Fleet, database]) => Fleet.serve({
        database,
        host: Option.getOrUndefined(flags.host),
        port: Option.getOrUndefined(flags.port),
        failover: {
          healthCheckInterval: Option.getOrUndefined(flags.healthCheckInterval),
          shardLockExpiration: Option.getOrUndefined(flags.shardLockExpiration),
          shardLockRefresh: Option.getOrUndefined(flags.shardLockRefresh)
        },
        logLevel: flags.logLevel,
        poll: {
          ...(Option.isSome(flags.pollInterval) ? { schedule: Schedule.spaced(flags.pollInterval.value) } : {}),
          ...(Option.isSome(flags.timeout) ? { deadline: flags.timeout.value } : {})
        }
      }))
    )
).pipe(Command.withDescription("Run durable video workflows stored in --database (sqlite file or Postgres), until Ctrl-C"))
