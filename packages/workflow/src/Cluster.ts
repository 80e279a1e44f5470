/**
 * Where workflows run and are stored: `@effect/cluster`'s engine over its SQL
 * storage (`@effect/sql`). A sqlite file gives one runner in one process, no
 * server needed; a Postgres URL gives a fleet of runners that share the
 * work (shards) and take over the work of a runner that dies.
 *
 * @since 0.1.0
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SingleRunner from "@effect/cluster/SingleRunner"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"

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

/** The driver's failure, said with the address; a password that found its way into the text is masked. */
const databaseError = (database: Database) => (error: unknown) => {
  const cause = Predicate.hasProperty(error, "cause") && error.cause instanceof Error ? `: ${error.cause.message}` : ""
  const said = `${error instanceof Error ? error.message : String(error)}${cause}`
  return new DatabaseError({
    message: passwordsOf(database).reduce((text, password) => text.split(password).join("***"), said),
    address: addressOf(database)
  })
}

/**
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
  /** Fine tuning of `@effect/cluster` (poll intervals, shard lock expiry). */
  readonly sharding?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
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
 * The database drivers are optional peers, loaded when a layer is built: an
 * application installs only the one it uses (`better-sqlite3`, under the
 * sqlite driver, is a native build).
 */
const driver = <A>(name: string, load: () => Promise<A>) =>
  Effect.tryPromise({
    try: load,
    catch: () =>
      new ConfigurationError({
        field: "database",
        message: `this database needs ${name}: install it with \`pnpm add ${name}@^0.53\``
      })
  })

const sqliteClient = (filename: string) =>
  Layer.unwrapEffect(
    Effect.map(
      driver("@effect/sql-sqlite-node", () => import("@effect/sql-sqlite-node/SqliteClient")),
      (SqliteClient) => SqliteClient.layer({ filename })
    )
  )

const pgClient = (url: Redacted.Redacted<string>) =>
  Layer.unwrapEffect(
    Effect.map(driver("@effect/sql-pg", () => import("@effect/sql-pg/PgClient")), (PgClient) => PgClient.layer({ url }))
  )

/**
 * The engine over the client: a failure of either (connecting, creating the
 * tables) is a `DatabaseError`, a defect too (the sqlite driver throws when
 * it cannot open its file). A `DatabaseError` is tried again 3 times: runners
 * starting together on a new database race to create the cluster's tables,
 * and the losers' `CREATE TABLE` fails ("already exists").
 */
const overDatabase = <A, E, R, E2, R2>(
  database: Database,
  engine: Layer.Layer<A, E, R>,
  client: Layer.Layer<R, E2 | ConfigurationError, R2>
): Layer.Layer<A, ConfigurationError | DatabaseError, R2> =>
  engine.pipe(
    Layer.provide(client),
    Layer.catchAllCause((cause): Layer.Layer<A, ConfigurationError | DatabaseError, R2> => {
      if (Cause.isInterruptedOnly(cause)) return Layer.failCause(Cause.map(cause, databaseError(database)))
      const error = Cause.squash(cause)
      return Layer.fail(error instanceof ConfigurationError ? error : databaseError(database)(error))
    }),
    Layer.retry(
      Schedule.exponential("250 millis").pipe(
        Schedule.intersect(Schedule.recurs(3)),
        Schedule.whileInput((error: ConfigurationError | DatabaseError) => error._tag === "DatabaseError")
      )
    )
  )

const sqlite = (database: Extract<Database, { _tag: "Sqlite" }>, options: Options) =>
  overDatabase(
    database,
    ClusterWorkflowEngine.layer.pipe(Layer.provideMerge(SingleRunner.layer({ runnerStorage: "sql", shardingConfig: options.sharding }))),
    sqliteClient(database.filename)
  )

const postgres = (database: Extract<Database, { _tag: "Postgres" }>, options: Options, clientOnly: boolean) =>
  Layer.unwrapEffect(
    Effect.map(checkPort(options.port ?? 24100), (port) =>
      overDatabase(
        database,
        ClusterWorkflowEngine.layer.pipe(
          Layer.provideMerge(
            NodeClusterSocket.layer({
              clientOnly,
              storage: "sql",
              shardingConfig: {
                ...(clientOnly ? {} : { runnerAddress: Option.some(RunnerAddress.make(options.host ?? "127.0.0.1", port)) }),
                ...options.sharding
              }
            })
          )
        ),
        pgClient(database.url)
      ))
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
