/**
 * Where workflows run and are stored: effect's cluster engine
 * (`effect/cluster`) over its SQL storage (`effect/sql`). A sqlite file
 * (through `node:sqlite`, see `SqliteClient`) gives one runner in one
 * process, no server needed; a Postgres URL gives a fleet of runners that
 * share the work (shards) and take over the work of a runner that dies.
 *
 * @since 0.1.0
 */
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as Cause from "effect/Cause"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import * as MessageStorage from "./internal/messageStorage.js"
import * as SqliteClient from "./SqliteClient.js"

/**
 * The database behind the workflows: a sqlite file (`sqlite:<path>`, or a
 * plain path) or Postgres (`postgres://…` / `postgresql://…`).
 *
 * @since 0.1.0
 * @category models
 */
export type Database =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted<string> }

/**
 * The database could not be opened or used: `address` says which (a sqlite
 * file, or Postgres' host, port and database: never its user or password).
 *
 * @since 0.1.0
 * @category errors
 */
export class DatabaseError extends Schema.TaggedError<DatabaseError>()("DatabaseError", {
  message: Schema.String,
  address: Schema.String
}) {}

const invalid = (message: string) => new ConfigurationError({ field: "database", message })

/**
 * Reads `--database`: a typed error naming the field when it is empty, of
 * another scheme than `sqlite:`, `postgres://` or `postgresql://`, or a
 * Postgres URL that does not parse.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseDatabase = (url: string): Effect.Effect<Database, ConfigurationError> => {
  const text = url.trim()
  if (/^postgres(ql)?:\/\//i.test(text)) {
    return URL.canParse(text)
      ? Effect.succeed({ _tag: "Postgres", url: Redacted.make(text) })
      : Effect.fail(invalid("is not a valid postgres:// URL"))
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1]
  if (scheme !== undefined && scheme.toLowerCase() !== "sqlite") {
    return Effect.fail(invalid(`must be a sqlite file (sqlite:<path>) or a postgres:// URL, not a ${scheme}:// URL`))
  }
  const filename = text.replace(/^sqlite:(\/\/)?/i, "")
  return filename === "" ? Effect.fail(invalid("must be a sqlite file or a postgres:// URL")) : Effect.succeed({ _tag: "Sqlite", filename })
}

/**
 * Where `database` is, to show: the sqlite file, or `host:port/database` of
 * a Postgres URL (its user and password left out).
 *
 * @since 0.1.0
 * @category models
 */
export const addressOf = (database: Database): string => {
  if (database._tag === "Sqlite") return database.filename
  const url = new URL(Redacted.value(database.url))
  return `${url.hostname === "" ? "localhost" : url.hostname}:${url.port === "" ? "5432" : url.port}${url.pathname}`
}

/** A URL's password as written and, when it is valid percent-encoding, decoded (as the driver sends it). */
const passwordsOf = (database: Database): ReadonlyArray<string> => {
  const written = database._tag === "Postgres" ? new URL(Redacted.value(database.url)).password : ""
  if (written === "") return []
  try {
    return [decodeURIComponent(written), written]
  } catch {
    return [written]
  }
}

/** The messages of an error and of its causes (5 deep at most), each once: a driver wraps the socket's error in its own. */
const messagesOf = (error: unknown): Array<string> => {
  const seen: Array<string> = []
  for (let depth = 0, at = error; depth < 5 && at !== undefined; depth++) {
    const message = Predicate.hasProperty(at, "message") ? String(at.message) : String(at)
    if (message !== "" && !seen.includes(message)) seen.push(message)
    at = Predicate.hasProperty(at, "cause") ? at.cause : undefined
  }
  return seen
}

/** The driver's failure, said with the address; a password that found its way into the text is masked. */
const databaseError = (database: Database) => (error: unknown) =>
  new DatabaseError({
    message: passwordsOf(database).reduce((text, password) => text.split(password).join("***"), messagesOf(error).join(": ")),
    address: addressOf(database)
  })

/**
 * How a runner joins the fleet: its database, its address, and its failover
 * timings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly database: Database
  /**
   * Postgres: this runner's address, where the other runners reach it.
   * Default `127.0.0.1`. The port must be outside Linux's ephemeral range
   * (32768–60999), where outgoing connections would take it. Default port
   * 24100; runners on one machine each need their own (24100, 24101, …).
   */
  readonly host?: string | undefined
  readonly port?: number | undefined
  /**
   * Fine tuning of `effect/cluster` (poll intervals, shard lock expiry). On
   * Postgres, given over `failoverDefaults`.
   */
  readonly sharding?: Partial<ShardingConfig.ShardingConfig["Service"]> | undefined
}

/**
 * How a Postgres fleet finds a dead runner and moves its shards, chosen for
 * video tasks (effect/cluster's own defaults: a health check every minute,
 * shard locks that expire after 35 s, refreshed every 10 s). Any of them can
 * be given in `Options.sharding`; `docs/decisions.md` argues the values.
 *
 * - `runnerHealthCheckInterval`: the runner holding the health-check
 *   singleton pings the others this often; a runner refusing its pings is
 *   marked unhealthy and its shards move. A live runner is never taken for
 *   dead by this alone: it would have to refuse pings for about a minute.
 * - `shardLockExpiration`: a runner whose heartbeat is older than this is
 *   gone (the bound when the health check cannot tell, e.g. the dead runner
 *   held the health-check singleton); Postgres also ends a lock session
 *   idle for this long, freeing its advisory locks.
 * - `shardLockRefreshInterval`: locks and heartbeat are refreshed this often
 *   (at most a third of the expiry), and a refresh slower than this makes
 *   the runner stop its shards' entities and release their locks.
 *
 * @since 0.1.0
 * @category defaults
 */
export const failoverDefaults: {
  readonly runnerHealthCheckInterval: Duration.Duration
  readonly shardLockExpiration: Duration.Duration
  readonly shardLockRefreshInterval: Duration.Duration
} = {
  runnerHealthCheckInterval: Duration.seconds(5),
  shardLockExpiration: Duration.seconds(20),
  shardLockRefreshInterval: Duration.seconds(6)
}

/**
 * What a layer of `options` gives `effect/cluster` as its `ShardingConfig`
 * (over effect's defaults, and its `SHARD_LOCK_EXPIRATION`-style environment
 * variables for what is not given here): on Postgres, `failoverDefaults`
 * under `options.sharding`; on sqlite (one runner), `options.sharding`.
 *
 * @since 0.1.0
 * @category defaults
 */
export const shardingOf = (options: Options): Partial<ShardingConfig.ShardingConfig["Service"]> => {
  // A key given as undefined leaves the default, as if not given.
  const given = Object.fromEntries(Object.entries(options.sharding ?? {}).filter(([, value]) => value !== undefined))
  return options.database._tag === "Postgres" ? { ...failoverDefaults, ...given } : given
}

/** Linux's default ephemeral port range: a runner listening there collides with outgoing connections. */
const ephemeral = { from: 32768, to: 60999 }

const checkPort = (port: number) =>
  Number.isInteger(port) && port > 0 && port < 65536 && (port < ephemeral.from || port > ephemeral.to)
    ? Effect.succeed(port)
    : Effect.fail(
      new ConfigurationError({
        field: "port",
        message: `must be an integer from 1 to 65535 outside ${ephemeral.from}–${ephemeral.to} (the ephemeral range), got ${port}`
      })
    )

/**
 * `@effect/sql-pg` is an optional peer, loaded when a Postgres layer is
 * built: an application on sqlite does not install it.
 */
const pgClient = (url: Redacted.Redacted<string>) =>
  Layer.unwrap(
    Effect.tryPromise({
      try: () => import("@effect/sql-pg/PgClient"),
      catch: () =>
        new ConfigurationError({
          field: "database",
          message: "a postgres:// database needs @effect/sql-pg: install it with `pnpm add @effect/sql-pg@^4.0.5`"
        })
    }).pipe(Effect.map((PgClient) => PgClient.layer({ url })))
  )

/** Builds `layer` in a scope of its own, closed when the build fails: a failed attempt leaves no pool open. */
const buildAttempt = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Effect.flatMap(Effect.scope, (outer) =>
    Effect.flatMap(Scope.fork(outer), (scope) =>
      Effect.onError(Layer.buildWithScope(layer, scope), (cause) => Scope.close(scope, Exit.failCause(cause)))))

/**
 * The engine over the client: a failure of either (connecting, creating the
 * tables) is a `DatabaseError`, a defect too. A `DatabaseError` is tried
 * again 3 times: runners starting together on a new database race to create
 * the cluster's tables, and the losers' `CREATE TABLE` fails ("already
 * exists").
 */
const overDatabase = <A, E, R, E2, R2>(
  database: Database,
  engine: Layer.Layer<A, E, R>,
  client: Layer.Layer<R, E2 | ConfigurationError, R2>
): Layer.Layer<A, ConfigurationError | DatabaseError, R2> =>
  Layer.effectContext(
    buildAttempt(Layer.provide(engine, client)).pipe(
      Effect.catchCause((cause): Effect.Effect<Context.Context<A>, ConfigurationError | DatabaseError> => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(Cause.map(cause, databaseError(database)))
        const error = Cause.squash(cause)
        return Effect.fail(error instanceof ConfigurationError ? error : databaseError(database)(error))
      }),
      Effect.retry({
        schedule: Schedule.exponential("250 millis"),
        times: 3,
        while: (error) => error._tag === "DatabaseError"
      })
    )
  )

/**
 * effect/cluster's SQL storage of messages (with a message that cannot be
 * read set aside, `internal/messageStorage.ts`) and of runners.
 */
const storage = (sharding: Partial<ShardingConfig.ShardingConfig["Service"]>) =>
  Layer.merge(MessageStorage.layer, Layer.orDie(SqlRunnerStorage.layer)).pipe(
    Layer.provide(ShardingConfig.layerFromEnv(sharding)),
    // The message storage hashes over-long deduplication keys.
    Layer.provide(NodeCrypto.layerDigest)
  )

/** effect's `SingleRunner.layer`, over `storage`. */
const sqlite = (database: Extract<Database, { _tag: "Sqlite" }>, options: Options) =>
  overDatabase(
    database,
    ClusterWorkflowEngine.layer.pipe(
      Layer.provideMerge(Sharding.layer),
      Layer.provideMerge(Runners.layerNoop),
      Layer.provideMerge(storage(shardingOf(options))),
      Layer.provide([RunnerHealth.layerNoop, ShardingConfig.layerFromEnv(shardingOf(options))])
    ),
    SqliteClient.layer({ filename: database.filename })
  )

const postgres = (database: Extract<Database, { _tag: "Postgres" }>, options: Options, clientOnly: boolean) =>
  Layer.unwrap(
    Effect.map(checkPort(options.port ?? 24100), (port) => {
      const shardingConfig = {
        ...(clientOnly ? {} : { runnerAddress: Option.some(RunnerAddress.make(options.host ?? "127.0.0.1", port)) }),
        ...shardingOf(options)
      }
      return overDatabase(
        database,
        ClusterWorkflowEngine.layer.pipe(
          Layer.provideMerge(NodeClusterSocket.layer({ clientOnly, storage: "byo", shardingConfig })),
          Layer.provideMerge(storage(shardingConfig))
        ),
        pgClient(database.url)
      )
    })
  )

/**
 * A runner: it executes the workflows registered on it. With sqlite it is
 * the only one (one process at a time on a file); with Postgres, start as
 * many as you like, each on its own address.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRunner = (options: Options): Layer.Layer<WorkflowEngine, ConfigurationError | DatabaseError> =>
  options.database._tag === "Sqlite" ? sqlite(options.database, options) : postgres(options.database, options, false)

/**
 * A client that starts and follows workflows without running any. With
 * sqlite there is no such thing: the client is the runner.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (options: Options): Layer.Layer<WorkflowEngine, ConfigurationError | DatabaseError> =>
  options.database._tag === "Sqlite" ? sqlite(options.database, options) : postgres(options.database, options, true)
