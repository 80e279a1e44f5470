/**
 * `switchboard worker --database <url>`: a runner of the durable video
 * workflows (`@switchboard/workflow`), until Ctrl-C. On a sqlite file it is
 * the only runner; on Postgres, start one per machine (or more, each with its
 * own `--port`) and they share the work. The programs (this command's and
 * `switchboard video --database`'s) are in `Fleet.ts`, loaded when they run.
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Connection from "../Connection.js"
import type * as FleetModule from "../Fleet.js"
import * as Inputs from "../Inputs.js"

/**
 * The `--database` flag, shared with `switchboard video`.
 *
 * @since 0.1.0
 * @category flags
 */
export const databaseFlag = Inputs.text("database").pipe(
  Flag.withMetavar("url"),
  Flag.withDescription("Run video tasks as durable workflows stored here: a sqlite file (sqlite:tasks.db) or postgres://…")
)

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
    database: databaseFlag,
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
      Effect.flatMap(fleet, (Fleet) => Fleet.serve({
        database: flags.database,
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
