/**
 * The embedded store of a single runner, measured (docs/decisions.md): a
 * store opened, one workflow run on it (an activity, a stored 1 s
 * `DurableClock` sleep), and two processes writing to one store.
 *
 *   pnpm exec node --experimental-strip-types bench/embedded-store.ts run sqlite|pglite <dir>
 *   pnpm exec node --experimental-strip-types bench/embedded-store.ts write sqlite|pglite <dir> <rows> <name>
 *
 * PGlite is not a dependency: `PGLITE_DIR` names a directory where
 * `@electric-sql/pglite` and `@electric-sql/pglite-socket` are installed.
 * Prints one JSON line.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as SingleRunner from "effect/cluster/SingleRunner"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as Activity from "effect/workflow/Activity"
import * as DurableClock from "effect/workflow/DurableClock"
import * as Workflow from "effect/workflow/Workflow"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as SqliteClient from "../src/SqliteClient.ts"

const [mode, store, dir, rows, name] = process.argv.slice(2)

const pglite = async () => {
  const base = pathToFileURL(Path.join(process.env.PGLITE_DIR!, "node_modules/@electric-sql/"))
  const { PGlite } = await import(new URL("pglite/dist/index.js", base).href)
  const { PGLiteSocketServer } = await import(new URL("pglite-socket/dist/index.js", base).href)
  const db = await PGlite.create(dir)
  const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1" })
  await server.start()
  const port = Number(server.getServerConn().split(":")[1])
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, close: async () => (await server.stop(), await db.close()) }
}

const client = (): Layer.Layer<SqlClient.SqlClient, unknown> =>
  store === "sqlite"
    ? SqliteClient.layer({ filename: Path.join(dir!, "store.sqlite") })
    : Layer.unwrap(
      Effect.map(
        Effect.acquireRelease(Effect.promise(pglite), (db) => Effect.promise(db.close)),
        // One session (PGlite's socket takes one connection), named "pglite":
        // else SqlRunnerStorage's advisory locks wait on a second session.
        (db) =>
          PgClient.layerFrom(Effect.map(PgClient.makeClient({ url: Redacted.make(db.url) }), (client) =>
            Object.defineProperty(client, "driver", { value: "pglite", enumerable: true })))
      )
    )

const Clip = Workflow.make("Bench/Clip", {
  payload: { key: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ key }) => key
})
const ClipLive = Clip.toLayer(({ key }) =>
  Effect.gen(function*() {
    const id = yield* Activity.make({ name: "submit", success: Schema.String, execute: Effect.succeed(`task-${key}`) })
    yield* DurableClock.sleep({ name: "wait", duration: "1 second", inMemoryThreshold: 0 })
    return id
  }))

const engine = ClusterWorkflowEngine.layer.pipe(
  Layer.provideMerge(SingleRunner.layer({ runnerStorage: "sql", shardingConfig: { entityMessagePollInterval: 200 } })),
  Layer.provide(NodeCrypto.layerDigest)
)

const rss = () => Math.round(process.resourceUsage().maxRSS / 1024)

const run = Effect.gen(function*() {
  const t0 = performance.now()
  const context = yield* Layer.build(client())
  const openMs = Math.round(performance.now() - t0)
  const result = yield* Clip.execute({ key: "one" }).pipe(
    Effect.provide(ClipLive.pipe(Layer.provideMerge(engine), Layer.provide(Layer.succeedContext(context))))
  )
  return { store, openMs, runMs: Math.round(performance.now() - t0), result, peakRssMB: rss() }
})

const write = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS bench_rows (id TEXT PRIMARY KEY, writer TEXT NOT NULL)`
  for (let i = 0; i < Number(rows); i++) yield* sql`INSERT INTO bench_rows (id, writer) VALUES (${`${name}-${i}`}, ${name!})`
  const [{ n }] = yield* sql<{ n: number | string }>`SELECT count(*) AS n FROM bench_rows`
  return { store, writer: name, rowsSeenAtEnd: Number(n), peakRssMB: rss() }
}).pipe(Effect.provide(client()))

Effect.runPromise(Effect.scoped(mode === "run" ? run : write)).then(
  (out) => (console.log(JSON.stringify(out)), process.exit(0)),
  (error) => (console.error(error), process.exit(1))
)
