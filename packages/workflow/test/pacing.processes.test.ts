/**
 * Issue 37, across real processes: three Node processes (`fixtures/pacer.mjs`
 * over the built packages) share one rate-limit budget through `SqlPacer` on
 * a private Postgres, against the emulator's limit mode (3 requests a
 * window). Six calls at once, two per process: the first window takes three,
 * the other three are held by the shared budget until the reset, and no call
 * meets a 429.
 *
 * Time: the emulator runs here on the test's clock, so its window ends only
 * when the test moves it, and every reply of the first window announces the
 * same reset (the whole window). The processes hold on their own clocks for
 * that long after the last reply they recorded; the test moves the
 * emulator's clock as soon as the first window's three calls are done, well
 * within the hold. Nothing is timed or asserted about time: the verdict is
 * the count of requests and 429s, and which calls had ended when.
 */
import { expect, it } from "@effect/vitest"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Emulator } from "@switchboard/emulator"
import * as Ports from "@switchboard/test-support/Ports"
import * as Processes from "@switchboard/test-support/Processes"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/testing/TestClock"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe } from "vitest"
import { SqlPacer } from "../src/index.js"
import { type Postgres, startPostgres } from "./postgres.js"
import { build, explainAfter } from "./processes.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
const budget = 3
/** The emulator's window: also how long the processes hold, on their own clocks, for the test to move it. */
const window = "15 seconds"

let postgres: Postgres | undefined
let dir: string | undefined

beforeAll(() => {
  // Outside the ephemeral range and above every other process test's ports (up to 64999).
  postgres = startPostgres(Ports.postgres.pacingProcesses())
  build()
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-fleet-pacing-"))
}, 240_000)
afterAll(async () => {
  await Processes.stopAll()
  postgres?.stop()
  if (dir !== undefined) Fs.rmSync(dir, { recursive: true, force: true })
})

const lines = (process: Processes.Running, prefix: string) =>
  process.stdout().split("\n").filter((line) => line.startsWith(`${prefix} `)).map((line) => line.slice(prefix.length + 1))

/** Resolves once `check` holds, asking every 50 ms (a wait, never a measured time). */
const until = (check: () => boolean): Promise<void> =>
  new Promise((resolve) => {
    const ask = () => (check() ? resolve() : void setTimeout(ask, 50))
    ask()
  })

/** The shared budget's row, as the processes left it. */
const rowOf = (url: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const [row] = yield* sql<{ readonly state: string }>`SELECT state FROM ${sql(SqlPacer.table)} WHERE name = 'fleet-key'`
      return JSON.parse(row!.state) as { readonly requests: { readonly remaining: number | null }; readonly inFlight: number }
    }).pipe(Effect.scoped, Effect.provide(PgClient.layer({ url: Redacted.make(url) })), Effect.orDie)
  )

describe("SqlPacer across processes", () => {
  it.effect("three processes on one Postgres keep to the emulator's budget: the calls past it wait for the reset, no 429", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const url = postgres!.database("fleet_pacing")
      const go = Path.join(dir!, "go")
      const processes = [0, 1, 2].map(() =>
        Processes.start(Path.join(here, "fixtures/pacer.mjs"), [], {
          cwd: Path.resolve(here, ".."),
          env: { ...process.env, BASE_URL: emulator.url, API_KEY: emulator.apiKey, DATABASE_URL: url, GO: go, CALLS: "2" }
        })
      )
      const done = () => processes.flatMap((p) => lines(p, "done"))
      const explain = () =>
        `requests: ${emulator.requestCount.pipe(Effect.runSync)}; ` +
        processes.map((p) => `pid ${p.pid}:\n${p.stdout()}${p.stderr().slice(-2000)}`).join("\n")
      yield* Effect.promise(() => Promise.all(processes.map((p) => p.waitFor(/^ready$/m, "stdout"))))
      Fs.writeFileSync(go, "")

      // The first window: the budget's three calls end; the three others are held.
      yield* Effect.promise(() => explainAfter(120_000, until(() => done().length >= budget), explain))
      expect(yield* emulator.requestCount).toBe(budget)
      expect(done()).toHaveLength(budget)
      const row = yield* Effect.promise(() => rowOf(url))
      expect(row.requests.remaining).toBe(0)
      expect(row.inFlight).toBe(0)

      // The reset: the held calls go into the next window.
      yield* TestClock.adjust(window)
      const exits = yield* Effect.promise(() => explainAfter(120_000, Promise.all(processes.map((p) => p.exited)), explain))
      for (const exit of exits) expect(exit, exit.stderr).toMatchObject({ code: 0 })
      expect(done().map((line) => JSON.parse(line))).toEqual(Array.from({ length: 6 }, () => ({ status: 200, attempts: 1 })))
      // Every reply any process saw was a 200: the emulator answered no 429.
      expect(processes.flatMap((p) => lines(p, "reply"))).toEqual(Array.from({ length: 6 }, () => "200"))
      expect(yield* emulator.requestCount).toBe(6)
    }).pipe(Effect.provide(Emulator.layer({ rateLimit: { requests: budget, window } }))), 300_000)
})
