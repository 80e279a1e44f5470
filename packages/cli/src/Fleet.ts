/**
 * What `switchboard worker` and `switchboard video --database` run, over
 * `@switchboard/workflow`: imported only when one of them runs, so other
 * commands start without effect's cluster and workflow modules and the SQL clients.
 *
 * @since 0.1.0
 */
import { type SwitchboardError, type TaskPoller, type Videos } from "@switchboard/core"
import { ConfigurationError } from "@switchboard/core/SwitchboardError"
import type * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Duration from "effect/Duration"
import type * as LogLevelModule from "effect/LogLevel"
import * as Path from "effect/Path"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import { NodeMedia } from "@switchboard/node"
import { Cluster, VideoWorkflow } from "@switchboard/workflow"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Errors from "./Errors.js"
import * as Output from "./Output.js"

/**
 * What `switchboard worker` takes: the database, this runner's address,
 * polling and failover.
 *
 * @since 0.1.0
 * @category models
 */
export interface WorkerOptions {
  /** The database's URL, `Redacted`: it may hold a password. */
  readonly database: Redacted.Redacted<string>
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly poll: TaskPoller.PollOptions<SwitchboardError.SwitchboardError>
  /** `switchboard worker`'s failover flags; what is not given is `Cluster.failoverDefaults`'. */
  readonly failover?: Failover | undefined
  /** The cluster's log lines shown (on stderr) from this level up; default `warning`. */
  readonly logLevel?: LogLevel | undefined
}

/**
 * `switchboard worker`'s failover timings; each one not given keeps
 * `Cluster.failoverDefaults`'.
 *
 * @since 0.1.0
 * @category models
 */
export interface Failover {
  readonly healthCheckInterval?: Duration.Duration | undefined
  readonly shardLockExpiration?: Duration.Duration | undefined
  readonly shardLockRefresh?: Duration.Duration | undefined
}

/**
 * `--log-level`'s values.
 *
 * @since 0.1.0
 * @category models
 */
export type LogLevel = "debug" | "info" | "warning" | "error" | "none"

const logLevels: Record<LogLevel, LogLevelModule.LogLevel> = {
  debug: "Debug",
  info: "Info",
  warning: "Warn",
  error: "Error",
  none: "None"
}

/** The shortest `--shard-lock-expiration`: below it a busy runner would lose its shards to a slow refresh. */
const minimumExpiration = Duration.seconds(3)

const seconds = (duration: Duration.Duration) => `${Number((Duration.toMillis(duration) / 1000).toFixed(3))}s`

/**
 * The failover flags as `effect/cluster`'s settings, over
 * `Cluster.failoverDefaults`: only what was given, checked (an expiration of
 * at least 3 s, a refresh of at most a third of the expiration), a bad value
 * a `UsageError` naming its flag.
 *
 * @since 0.1.0
 * @category failover
 */
export const shardingOf = (failover: Failover = {}): Effect.Effect<
  Partial<Pick<ShardingConfig.ShardingConfig["Service"], keyof typeof Cluster.failoverDefaults>>,
  Errors.UsageError
> => {
  const expiration = failover.shardLockExpiration ?? Cluster.failoverDefaults.shardLockExpiration
  if (Duration.isLessThan(expiration, minimumExpiration)) {
    return Effect.fail(
      new Errors.UsageError({
        message: `--shard-lock-expiration must be at least ${seconds(minimumExpiration)}, got ${seconds(expiration)}`
      })
    )
  }
  const third = Duration.divideUnsafe(expiration, 3)
  if (failover.shardLockRefresh !== undefined && Duration.isGreaterThan(failover.shardLockRefresh, third)) {
    return Effect.fail(
      new Errors.UsageError({
        message: `--shard-lock-refresh must be at most a third of the shard lock expiration (${seconds(expiration)}): at most ${
          seconds(third)
        }, got ${seconds(failover.shardLockRefresh)}`
      })
    )
  }
  return Effect.succeed({
    ...(failover.healthCheckInterval === undefined ? {} : { runnerHealthCheckInterval: failover.healthCheckInterval }),
    ...(failover.shardLockExpiration === undefined ? {} : { shardLockExpiration: failover.shardLockExpiration }),
    ...(failover.shardLockRefresh === undefined ? {} : { shardLockRefreshInterval: failover.shardLockRefresh })
  })
}

/**
 * The settings a runner of `options` works with, said in one line: the
 * health check, the lock expiration and the refresh (effect/cluster
 * refreshes at most every third of the expiration).
 */
const failoverLine = (options: WorkerOptions) =>
  Effect.map(shardingOf(options.failover), (given) => {
    const settings = { ...Cluster.failoverDefaults, ...given }
    const expiration = Duration.fromInputUnsafe(settings.shardLockExpiration)
    const refresh = Duration.min(Duration.fromInputUnsafe(settings.shardLockRefreshInterval), Duration.divideUnsafe(expiration, 3))
    return `Failover: runners pinged every ${seconds(Duration.fromInputUnsafe(settings.runnerHealthCheckInterval))}; shard locks expire after ${
      seconds(expiration)
    }, refreshed every ${seconds(refresh)}`
  })

/**
 * The cluster's own log lines on stderr (stdout is the command's), from
 * `level` up.
 *
 * @since 0.1.0
 * @category logging
 */
export const logging = (level: LogLevel = "warning") => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(
    Output.logsToStderr,
    Effect.provideService(References.MinimumLogLevel, logLevels[level])
  )

/** A flag's bad value, said as the flag; a database that cannot be used stays a `DatabaseError`. */
const usage = (e: ConfigurationError) => new Errors.UsageError({ message: `--${e.field} ${e.message}` })

const databaseOf = (url: Redacted.Redacted<string>) => Effect.mapError(Cluster.parseDatabase(Redacted.value(url)), usage)

/** A layer whose `ConfigurationError` is said as the flag (effect 4 has no `Layer.mapError`). */
const withUsage = <A>(layer: Layer.Layer<A, ConfigurationError | Cluster.DatabaseError>) =>
  Layer.catchTag(layer, "ConfigurationError", (e) => Layer.unwrap<unknown, never, never, Errors.UsageError, never>(Effect.fail(usage(e))))

/**
 * A runner with the video workflow registered, over the SDK in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const runnerLayer = (options: WorkerOptions) =>
  Layer.unwrap(
    Effect.map(Effect.all([databaseOf(options.database), shardingOf(options.failover)]), ([database, sharding]) =>
      VideoWorkflow.layer(options.poll).pipe(
        Layer.provideMerge(withUsage(Cluster.layerRunner({ database, host: options.host, port: options.port, sharding })))
      ))
  )

/**
 * Where workflows are started from: the runner itself on sqlite (one process
 * owns the file), a client of the fleet on Postgres.
 *
 * @since 0.1.0
 * @category layers
 */
export const clientLayer = (options: WorkerOptions) =>
  Layer.unwrap(
    Effect.map(databaseOf(options.database), (database) =>
      database._tag === "Sqlite" ? runnerLayer(options) : withUsage(Cluster.layerClient({ database }))
    )
  )

/**
 * Runs until interrupted, after saying where.
 *
 * @since 0.1.0
 * @category programs
 */
export const serve = Effect.fn("switchboard.worker.serve")(function*(options: WorkerOptions) {
  const database = yield* databaseOf(options.database)
  yield* Output.line(
    database._tag === "Sqlite"
      ? `Switchboard worker running video workflows stored in ${database.filename} (the only runner on this file)`
      : `Switchboard worker running video workflows on Postgres ${Cluster.addressOf(database)}, reachable by other runners at ${
        options.host ?? "127.0.0.1"
      }:${options.port ?? 24100}`
  )
  if (database._tag === "Postgres") yield* Output.line(yield* failoverLine(options))
  yield* Output.line(Output.dim("Ctrl-C stops it; unfinished workflows go on when a worker runs again."))
  return yield* Effect.never
}, (self, options) => Effect.provide(self, runnerLayer(options)), (self, options) => logging(options.logLevel)(self))

const narrate = (text: string) => Output.errorLine(text)

/** Waits for the end of the workflow with `key`, asking its storage every second. */
const awaitEnd = (key: string) =>
  VideoWorkflow.result(key).pipe(
    Effect.repeat({ until: (result) => result?._tag !== "Suspended" && result !== undefined, schedule: Schedule.spaced("1 second") }),
    Effect.andThen(VideoWorkflow.result(key))
  )

/**
 * `switchboard video --database`: starts the workflow for the request under
 * `key` (or, without a request, finds the one with `key`), waits for its
 * end, saves the video into `out` and prints its path. Ctrl-C leaves the
 * workflow to the runners (on sqlite: to the next run with this key).
 *
 * @since 0.1.0
 * @category programs
 */
export const video = (
  options: WorkerOptions & { readonly key?: string | undefined; readonly request?: Videos.SubmitRequest | undefined; readonly out: string }
) => {
  const key = options.key ?? (options.request === undefined ? "" : VideoWorkflow.keyOf(options.request))
  return Effect.gen(function*() {
    if (options.request !== undefined) {
      yield* VideoWorkflow.start(options.request, { key })
      yield* narrate(`Started video workflow ${key}; waiting for it (Ctrl-C leaves it running, stored in the database).`)
    } else if ((yield* VideoWorkflow.result(key)) === undefined) {
      const database = yield* databaseOf(options.database)
      return yield* new Errors.UsageError({ message: `No video workflow with key ${key} in ${Cluster.addressOf(database)}.` })
    }
    const result = yield* awaitEnd(key)
    if (result?._tag !== "Complete") return yield* Effect.die(new Error("a finished workflow has no result"))
    const video = yield* result.exit
    const paths = yield* Path.Path
    const path = yield* NodeMedia.save(video.videoUrl, paths.join(options.out, NodeMedia.videoFileName(video.taskId, video.videoUrl)))
    yield* narrate(`Saved ${path} (task ${video.taskId})`)
    yield* Output.line(path)
  }).pipe(
    Effect.onInterrupt(() =>
      narrate(`Interrupted. The workflow goes on; follow it with: switchboard video resume --key ${JSON.stringify(key)} --database …`)
    ),
    Effect.provide(clientLayer(options)),
    logging(options.logLevel)
  )
}

