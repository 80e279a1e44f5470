/**
 * The `node:sqlite` client: another connection's write lock is waited for on
 * the event loop (never by blocking the thread), up to `busyTimeout`; and
 * node:sqlite's ExperimentalWarning is dropped, every other warning kept.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { SqliteClient } from "../src/index.js"
import { nextTurn } from "./fixtures.js"

const temporaryFile = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-sqlite-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => Path.join(dir, "store.sqlite")))

/** A client of its own on `filename`: another connection, as another process would have. */
const connect = (config: SqliteClient.Config) =>
  Effect.map(Layer.build(SqliteClient.layer(config)), Context.get(SqlClient.SqlClient))

describe("SqliteClient", () => {
  it.effect("busyTimeout: NaN, negative or unreadable (\"forever\") is a ConfigurationError naming it, not a defect", () =>
    Effect.gen(function*() {
      const filename = yield* temporaryFile
      for (const busyTimeout of [NaN, -1, "forever", "10 minuts"]) {
        const error = yield* Effect.flip(connect({ filename, busyTimeout: busyTimeout as never }))
        expect(error, String(busyTimeout)).toMatchObject({ _tag: "ConfigurationError", field: "busyTimeout" })
      }
    }))

  it.live("a writer waits for another connection's transaction, the event loop turning meanwhile, then writes", () =>
    Effect.gen(function*() {
      const filename = yield* temporaryFile
      const [holder, writer] = [yield* connect({ filename }), yield* connect({ filename })]
      yield* holder`CREATE TABLE t (id TEXT PRIMARY KEY)`
      const release = yield* Deferred.make<void>()
      const begun = yield* Deferred.make<void>()
      const held = yield* holder`INSERT INTO t (id) VALUES ('held')`.pipe(
        Effect.andThen(Deferred.succeed(begun, undefined)),
        Effect.andThen(Deferred.await(release)),
        holder.withTransaction,
        Effect.forkChild
      )
      yield* Deferred.await(begun)
      const write = yield* Effect.forkChild(writer`INSERT INTO t (id) VALUES ('waited')`)
      // The writer waits, and the event loop goes on turning while it does.
      for (let turn = 0; turn < 20; turn++) yield* nextTurn
      expect(write.pollUnsafe()).toBeUndefined()
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(held)
      yield* Fiber.join(write)
      expect(yield* writer<{ id: string }>`SELECT id FROM t ORDER BY id`).toEqual([{ id: "held" }, { id: "waited" }])
    }))

  it.live("past busyTimeout the writer fails with SqlError: LockTimeoutError", () =>
    Effect.gen(function*() {
      const filename = yield* temporaryFile
      const holder = yield* connect({ filename })
      const writer = yield* connect({ filename, busyTimeout: "30 millis" })
      yield* holder`CREATE TABLE t (id TEXT PRIMARY KEY)`
      const release = yield* Deferred.make<void>()
      const begun = yield* Deferred.make<void>()
      yield* holder`INSERT INTO t (id) VALUES ('held')`.pipe(
        Effect.andThen(Deferred.succeed(begun, undefined)),
        Effect.andThen(Deferred.await(release)),
        holder.withTransaction,
        Effect.forkScoped
      )
      yield* Deferred.await(begun)
      const error = yield* Effect.flip(writer`INSERT INTO t (id) VALUES ('late')`)
      expect(error).toMatchObject({ _tag: "SqlError", reason: { _tag: "LockTimeoutError" } })
      yield* Deferred.succeed(release, undefined)
    }))

  it("drops node:sqlite's ExperimentalWarning and no other warning", async () => {
    // Bundled: the client imports @switchboard/core, whose sources Node cannot load as they are.
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-sqlite-warning-"))
    const script = Path.join(dir, "script.mjs")
    await esbuild.build({
      stdin: {
        contents: `
          import * as SqliteClient from ${JSON.stringify(fileURLToPath(new URL("../src/SqliteClient.ts", import.meta.url)))}
          import * as Effect from "effect/Effect"
          import * as Layer from "effect/Layer"
          await Effect.runPromise(Effect.scoped(Layer.build(SqliteClient.layer({ filename: ":memory:" }))))
          process.emitWarning("another warning", "ExperimentalWarning")`,
        resolveDir: Path.dirname(fileURLToPath(import.meta.url)),
        loader: "ts"
      },
      outfile: script,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node22",
      conditions: ["@switchboard/source"],
      banner: { js: "import { createRequire as bannerRequire } from 'node:module'; const require = bannerRequire(import.meta.url);" },
      logLevel: "silent"
    })
    const child = spawnSync(process.execPath, [script], { encoding: "utf8" })
    Fs.rmSync(dir, { recursive: true, force: true })
    expect(child.status, child.stderr).toBe(0)
    expect(child.stderr).toContain("another warning")
    expect(child.stderr).not.toContain("SQLite is an experimental feature")
  })
})
