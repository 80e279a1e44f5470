/**
 * Opening the database behind the workflows: a bad `--database` is a typed
 * error naming the field; a database that cannot be reached or opened is a
 * `DatabaseError` with its address, and never the password of the URL.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Cluster } from "../src/index.js"

/** A port on 127.0.0.1 where nothing listens: one just let go. */
const refusedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })
)

const build = <A, E>(layer: Layer.Layer<A, E>) => Effect.flip(Effect.scoped(Layer.build(layer)))

describe("Cluster.parseDatabase", () => {
  it.effect("sqlite files and postgres URLs; another scheme, an empty value or a broken URL: ConfigurationError on database", () =>
    Effect.gen(function*() {
      expect(yield* Cluster.parseDatabase("sqlite:tasks.db")).toEqual({ _tag: "Sqlite", filename: "tasks.db" })
      expect(yield* Cluster.parseDatabase("./tasks.sqlite")).toEqual({ _tag: "Sqlite", filename: "./tasks.sqlite" })
      expect((yield* Cluster.parseDatabase("postgresql://db:5433/fleet"))._tag).toBe("Postgres")
      for (const url of ["mysql://db/fleet", "http://db/fleet", "", "sqlite:", "postgres://[::1"]) {
        expect(yield* Effect.flip(Cluster.parseDatabase(url)), url).toMatchObject({ _tag: "ConfigurationError", field: "database" })
      }
    }))

  it.effect("an address leaves the user and the password out", () =>
    Effect.gen(function*() {
      expect(Cluster.addressOf(yield* Cluster.parseDatabase("postgres://alice:s3cret@db.internal:5433/fleet"))).toBe("db.internal:5433/fleet")
      expect(Cluster.addressOf(yield* Cluster.parseDatabase("postgres://alice@db.internal/fleet"))).toBe("db.internal:5432/fleet")
    }))
})

describe("Cluster.shardingOf: what effect/cluster is given", () => {
  it.effect("Postgres: failoverDefaults (5 s, 20 s, 6 s) under Options.sharding", () =>
    Effect.gen(function*() {
      const database = yield* Cluster.parseDatabase("postgres://db/fleet")
      expect(Cluster.shardingOf({ database })).toEqual({
        runnerHealthCheckInterval: Duration.seconds(5),
        shardLockExpiration: Duration.seconds(20),
        shardLockRefreshInterval: Duration.seconds(6)
      })
      const given = Cluster.shardingOf({
        database,
        sharding: { shardLockExpiration: "35 seconds", entityMessagePollInterval: "500 millis" }
      })
      expect(given).toEqual({
        runnerHealthCheckInterval: Duration.seconds(5),
        shardLockExpiration: "35 seconds",
        shardLockRefreshInterval: Duration.seconds(6),
        entityMessagePollInterval: "500 millis"
      })
    }))

  it.effect("sqlite (one runner): only what Options.sharding gives, effect's defaults for the rest", () =>
    Effect.gen(function*() {
      const database = yield* Cluster.parseDatabase("sqlite:tasks.db")
      expect(Cluster.shardingOf({ database })).toEqual({})
      expect(Cluster.shardingOf({ database, sharding: { entityMessagePollInterval: "1 second" } })).toEqual({ entityMessagePollInterval: "1 second" })
    }))
})

describe("a database that cannot be used", () => {
  it.live("Postgres refusing the connection: DatabaseError with the address, without the password", () =>
    Effect.gen(function*() {
      const port = yield* refusedPort
      const database = yield* Cluster.parseDatabase(`postgres://alice:s3cret-pw@127.0.0.1:${port}/fleet`)
      for (const layer of [Cluster.layerClient({ database }), Cluster.layerRunner({ database, port: 24999 })]) {
        const error = yield* build(layer)
        expect(error).toMatchObject({ _tag: "DatabaseError", address: `127.0.0.1:${port}/fleet`, message: expect.stringContaining("ECONNREFUSED") })
        expect(JSON.stringify(error)).not.toContain("s3cret-pw")
        expect(String(error)).not.toContain("s3cret-pw")
      }
    }))

  it.live("a password that is not valid percent-encoding: DatabaseError too, never a defect, the password masked", () =>
    Effect.gen(function*() {
      const port = yield* refusedPort
      const database = yield* Cluster.parseDatabase(`postgres://alice:pw%E0%A4%A@127.0.0.1:${port}/fleet`)
      const error = yield* build(Cluster.layerClient({ database }))
      expect(error).toMatchObject({ _tag: "DatabaseError", address: `127.0.0.1:${port}/fleet` })
      expect(String(error)).not.toContain("pw%E0%A4%A")
    }))

  it.live("a sqlite file in a directory that does not exist: DatabaseError with the file", () =>
    Effect.gen(function*() {
      const filename = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-cluster-")), "missing", "tasks.sqlite")
      const error = yield* build(Cluster.layerRunner({ database: { _tag: "Sqlite", filename } }))
      expect(error).toMatchObject({ _tag: "DatabaseError", address: filename })
    }))

  // Effect 4 memoizes layers by reference across nested provides, and the
  // engine is made of effect/cluster's constant layers: each runner builds them
  // in a memo map of its own (buildAttempt), not in the outer one.
  it.live("a runner provided inside another, on another file, is an engine of its own", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-cluster-"))
      const runner = (name: string) => Cluster.layerRunner({ database: { _tag: "Sqlite", filename: Path.join(dir, name) } })
      const [outer, inner] = yield* Effect.gen(function*() {
        const outer = yield* WorkflowEngine.WorkflowEngine
        return [outer, yield* Effect.provide(Effect.service(WorkflowEngine.WorkflowEngine), runner("b.sqlite"))] as const
      }).pipe(Effect.provide(runner("a.sqlite")))
      expect(inner).not.toBe(outer)
    }))
})
