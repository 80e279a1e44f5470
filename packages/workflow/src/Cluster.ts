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
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

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
 * Reads `--database`: a typed error naming the field when it is empty.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseDatabase = (url: string): Effect.Effect<Database, ConfigurationError> => {
  const text = url.trim()
  if (/^postgres(ql)?:\/\//i.test(text)) return Effect.succeed({ _tag: "Postgres", url: Redacted.make(text) })
  const filename = text.replace(/^sqlite:(\/\/)?/i, "")
  return filename === ""
    ? Effect.fail(new ConfigurationError({ field: "database", message: "must be a sqlite file or a postgres:// URL" }))
    : Effect.succeed({ _tag: "Sqlite", filename })
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
      (SqliteClient) => Layer.orDie(SqliteClient.layer({ filename }))
    )
  )

const pgClient = (url: Redacted.Redacted<string>) =>
  Layer.unwrapEffect(
    Effect.map(driver("@effect/sql-pg", () => import("@effect/sql-pg/PgClient")), (PgClient) => Layer.orDie(PgClient.layer({ url })))
  )

const sqlite = (filename: string, options: Options) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(SingleRunner.layer({ runnerStorage: "sql", shardingConfig: options.sharding })),
    Layer.orDie,
    Layer.provide(sqliteClient(filename))
  )

const postgres = (url: Redacted.Redacted<string>, options: Options, clientOnly: boolean) =>
  Layer.unwrapEffect(
    Effect.map(checkPort(options.port ?? 24100), (port) =>
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
        ),
        Layer.orDie,
        Layer.provide(pgClient(url))
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
export const layerRunner = (options: Options): Layer.Layer<WorkflowEngine, ConfigurationError> =>
  options.database._tag === "Sqlite" ? sqlite(options.database.filename, options) : postgres(options.database.url, options, false)

/**
 * A client that starts and follows workflows without running any. With
 * sqlite there is no such thing: the client is the runner.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (options: Options): Layer.Layer<WorkflowEngine, ConfigurationError> =>
  options.database._tag === "Sqlite" ? sqlite(options.database.filename, options) : postgres(options.database.url, options, true)
