/**
 * An `effect/sql` client on `node:sqlite` (Node ≥ 22.5, no native build):
 * the store of a single runner and of `SqlTaskJournal` on a file.
 * `@effect/sql-sqlite-node` does not load on effect 4.1, and effect ships
 * what a client needs (`Statement.makeCompilerSqlite`,
 * `SqlClient.makeSqliteAcquirers`, `classifySqliteError`).
 *
 * One connection per client, shared through a semaphore. Writers in other
 * connections (other processes, or other clients in this one) are waited for
 * without blocking the event loop: a busy database is tried again every few
 * milliseconds, up to `busyTimeout`, and transactions begin with
 * `BEGIN IMMEDIATE`, so a transaction never fails busy half-way through.
 *
 * @since 1.0.0
 */
import type { ConfigurationError } from "@switchboard/core/SwitchboardError"
import { duration } from "@switchboard/core/SwitchboardConfig"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Semaphore from "effect/Semaphore"
import * as Client from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import * as Stream from "effect/Stream"
import type * as NodeSqlite from "node:sqlite"

/**
 * What the SQLite client takes: the file, read-only, WAL and how long to
 * wait for a lock.
 *
 * @since 1.0.0
 * @category models
 */
export interface Config {
  readonly filename: string
  readonly readonly?: boolean | undefined
  /** Default false: the file is in WAL mode, so readers never wait for the writer. */
  readonly disableWAL?: boolean | undefined
  /** How long a statement waits for another connection's write lock. Default 5 seconds. */
  readonly busyTimeout?: Duration.Input | undefined
}

/**
 * `node:sqlite` prints an ExperimentalWarning when first loaded: it is ours,
 * and expected. Only that one warning, during that one load, is dropped.
 */
const loadSqlite = (): typeof NodeSqlite => {
  const emitWarning = process.emitWarning
  process.emitWarning = ((warning: string | Error, ...rest: Array<unknown>) => {
    const text = typeof warning === "string" ? warning : warning.message
    if (!/^SQLite is an experimental feature/.test(text)) Reflect.apply(emitWarning, process, [warning, ...rest])
  }) as typeof process.emitWarning
  try {
    return process.getBuiltinModule("node:sqlite")
  } finally {
    process.emitWarning = emitWarning
  }
}

let sqlite: typeof NodeSqlite | undefined

const sqlError = (operation: string) => (cause: unknown): SqlError => {
  // node:sqlite names the SQLite result code `errcode`; the classifier reads `errno`.
  const errno = typeof cause === "object" && cause !== null && "errcode" in cause ? cause.errcode : undefined
  const classified = typeof errno === "number" ? Object.assign(Object.create(cause as object), { errno }) : cause
  return new SqlError({ reason: classifySqliteError(classified, { message: `SQLite: could not ${operation}`, operation }) })
}

const isBusy = (error: SqlError) => error.reason._tag === "LockTimeoutError"

/** The event loop's timer, not the application's `Clock`: a lock wait is I/O, and a `TestClock` must not hold it. */
const pause = Effect.callback<void>((resume) => {
  const timer = setTimeout(() => resume(Effect.void), 5)
  return Effect.sync(() => clearTimeout(timer))
})

/** `f`, tried again after a pause while another connection holds the lock, up to `busyTimeout`. */
const whileBusy = <A>(f: () => A, operation: string, busyTimeout: Duration.Duration) =>
  Effect.try({ try: f, catch: sqlError(operation) }).pipe(
    Effect.tapError((error) => (isBusy(error) ? pause : Effect.void)),
    Effect.retry({ while: isBusy, times: Math.ceil(Duration.toMillis(busyTimeout) / 5) })
  )

/** The file opened; closed again if it cannot be put in WAL mode (another process switching it holds the lock). */
const open = (config: Config, busyTimeout: Duration.Duration) =>
  Effect.flatMap(
    Effect.try({
      try: () => {
        sqlite ??= loadSqlite()
        return new sqlite.DatabaseSync(config.filename, { readOnly: config.readonly ?? false, timeout: 0 })
      },
      catch: sqlError("open the database")
    }),
    (db) =>
      config.disableWAL === true || config.readonly === true
        ? Effect.succeed(db)
        : whileBusy(() => db.exec("PRAGMA journal_mode = WAL"), "open the database", busyTimeout).pipe(
          Effect.as(db),
          Effect.onError(() => Effect.sync(() => db.close()))
        )
  )

/** Records, or arrays with `setReturnArrays`: the `Connection` methods say which they give. */
type Rows = ReadonlyArray<never>

/** Prepared statements kept per client, the oldest dropped past this many. */
const cacheSize = 200

const makeConnection = (db: NodeSqlite.DatabaseSync, busyTimeout: Duration.Duration): Connection => {
  const cache = new Map<string, NodeSqlite.StatementSync>()
  const prepare = (sql: string, cached: boolean) => {
    let statement = cache.get(sql)
    if (statement === undefined) {
      statement = db.prepare(sql)
      if (cached) cache.set(sql, statement)
      if (cache.size > cacheSize) cache.delete(cache.keys().next().value!)
    }
    return statement
  }
  const run = (sql: string, params: ReadonlyArray<unknown>, arrays: boolean, cached = true) =>
    whileBusy((): Rows => {
      const statement = prepare(sql, cached)
      statement.setReturnArrays(arrays)
      const args = params as Array<NodeSqlite.SQLInputValue>
      if (statement.columns().length > 0) return statement.all(...args) as ReadonlyArray<unknown> as Rows
      statement.run(...args)
      return []
    }, "run a statement", busyTimeout)
  type Transform = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  const rows = (cached: boolean) => (sql: string, params: ReadonlyArray<unknown>, transform: Transform) =>
    transform === undefined ? run(sql, params, false, cached) : Effect.map(run(sql, params, false, cached), transform)
  return {
    execute: rows(true),
    executeUnprepared: rows(false),
    executeRaw: (sql, params) => run(sql, params, false),
    executeValues: (sql, params) => run(sql, params, true),
    executeValuesUnprepared: (sql, params) => run(sql, params, true, false),
    // Read whole: iterating a statement would hold the one connection across the stream's pulls.
    executeStream: (sql, params, transform) => Stream.fromIterableEffect(rows(true)(sql, params, transform))
  }
}

/**
 * A client on the file, closed with the scope.
 *
 * @since 1.0.0
 * @category constructors
 */
export const make = Effect.fnUntraced(function*(config: Config) {
  const busyTimeout = yield* Effect.fromResult(duration("busyTimeout", config.busyTimeout ?? "5 seconds"))
  const db = yield* Effect.acquireRelease(open(config, busyTimeout), (db) => Effect.sync(() => db.close()))
  const connection = makeConnection(db, busyTimeout)
  const acquirers = Client.makeSqliteAcquirers({
    connection: Effect.succeed(connection),
    semaphore: yield* Semaphore.make(1),
    isTransaction: () => db.isTransaction
  })
  return yield* Client.make({
    ...acquirers,
    compiler: Statement.makeCompilerSqlite(),
    driver: "sqlite-node",
    beginTransaction: "BEGIN IMMEDIATE",
    spanAttributes: [["db.system.name", "sqlite"]]
  })
})

/**
 * The client as `SqlClient`.
 *
 * @since 1.0.0
 * @category layers
 */
export const layer = (config: Config): Layer.Layer<Client.SqlClient, SqlError | ConfigurationError> =>
  Layer.effectContext(Effect.map(make(config), (client) => Context.make(Client.SqlClient, client))).pipe(
    Layer.provide(Reactivity.layer)
  )
