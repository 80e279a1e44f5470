/**
 * Issue 33, case 8, across real processes (`fixtures/runner.mjs` over the
 * built package), on sqlite and on Postgres: a runner starts 6 video
 * workflows and is SIGKILLed once each has been polled; one workflow's
 * stored message (its run request, unprocessed: its task never ends) is
 * overwritten with text that is not JSON; a runner started again sets that
 * message aside (answered with a defect naming it, copied to the quarantine
 * table, logged with its id) and finishes the 5 healthy workflows.
 * Without the guard (`internal/messageStorage.ts`), effect/cluster's read of
 * the stored messages throws on that row at every poll and the restarted
 * runner resumes none of them: the test runs out of time.
 */
import { Emulator } from "@switchboard/emulator"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { awaitRequests } from "./fleet.js"
import * as Ports from "@switchboard/test-support/Ports"
import { type Postgres, startPostgres } from "./postgres.js"
import { build, explainAfter, readLog, startRunner, stopAll } from "./processes.js"

let postgres: Postgres | undefined
const dirs: Array<string> = []

beforeAll(() => {
  postgres = startPostgres(Ports.postgres.corrupt())
  build()
}, 240_000)
afterAll(async () => {
  await stopAll()
  postgres?.stop()
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const runtime = ManagedRuntime.make(Emulator.layer())
afterAll(() => runtime.dispose())

const count = 6
const broken = "corrupt-0"
/** Not JSON: what a torn write or a hand edit leaves. */
const garbage = `{"key":"${broken}",`

interface Store {
  /** Overwrites the payload of `broken`'s unprocessed run request; how many rows changed. */
  readonly corrupt: () => Promise<number>
  /** The quarantine table's rows. */
  readonly quarantined: () => Promise<ReadonlyArray<{ readonly id: string; readonly payload: string; readonly reason: string }>>
}

const corruptSql = `UPDATE cluster_messages SET payload = '${garbage}' WHERE tag = 'run' AND payload LIKE '%"${broken}"%'`
const quarantineSql = "SELECT id, payload, reason FROM switchboard_workflow_quarantine"

const sqliteStore = (file: string): Store => ({
  corrupt: async () => {
    const db = new DatabaseSync(file)
    try {
      return Number(db.prepare(corruptSql).run().changes)
    } finally {
      db.close()
    }
  },
  quarantined: async () => {
    const db = new DatabaseSync(file)
    try {
      return db.prepare(quarantineSql).all() as unknown as ReadonlyArray<{ id: string; payload: string; reason: string }>
    } finally {
      db.close()
    }
  }
})

const onPostgres = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.scoped, Effect.provide(PgClient.layer({ url: Redacted.make(url) })), Effect.orDie)
  )

const postgresStore = (url: string): Store => ({
  corrupt: () => onPostgres(url, (sql) => Effect.map(sql.unsafe(`${corruptSql} RETURNING id`), (rows) => rows.length)),
  quarantined: () =>
    onPostgres(url, (sql) => sql.unsafe<{ id: string; payload: string; reason: string }>(quarantineSql))
})

const scenario = async (database: string, store: Store, more: Record<string, string> = {}) => {
  const emulator = await runtime.runPromise(Emulator.Emulator)
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-corrupt-"))
  dirs.push(dir)
  const log = Path.join(dir, "log.jsonl")
  const env = {
    DATABASE: database,
    BASE_URL: emulator.url,
    API_KEY: emulator.apiKey,
    LOG: log,
    COUNT: String(count),
    PREFIX: "corrupt",
    SLOW: "1",
    STUCK_KEY: broken,
    POLL_MS: "100",
    ...more
  }
  onTestFinished(stopAll)
  const first = startRunner({ ...env, START: "1" })
  await first.waitFor(/^started /m, "stdout")
  // Every workflow polled once (its submission stored): then the crash.
  const polled = () => new Set(readLog(log).filter((e) => e.ev === "status" && e.pid === first.pid).map((e) => e.taskId)).size
  await explainAfter(150_000, awaitRequests(runtime, emulator, () => polled() === count), () =>
    `the first runner did not poll every task: ${polled()} polled; ${(first.stdout() + first.stderr()).slice(-1500)}`)
  await first.kill()
  expect(await store.corrupt()).toBe(1)

  const second = startRunner({ ...env, FOLLOW: "1" })
  const out = await explainAfter(150_000, second.waitFor(/^complete .*\n/m, "stdout"), () =>
    `the restarted runner did not finish: ${(second.stdout() + second.stderr()).slice(-1500)}; ` +
    `${readLog(log).filter((e) => e.pid === second.pid && e.ev === "status").length} status calls by it`)
  const output = second.stdout() + second.stderr()
  await second.kill()
  const ends = JSON.parse(/^complete (.*)$/m.exec(out)![1]!) as ReadonlyArray<{ key: string; exit: string; cause?: string }>
  const quarantined = await store.quarantined()
  console.log(
    `corrupt (${database.split(":")[0]}): ${ends.filter((e) => e.exit === "Success").length}/${count - 1} healthy workflows ended with a video; ` +
      `${quarantined.length} message set aside: ${quarantined[0]?.reason}`
  )
  // The healthy workflows resumed and ended with their videos.
  expect(ends.filter((e) => e.key !== broken)).toEqual(
    Array.from({ length: count - 1 }, (_, i) => ({ key: `corrupt-${i + 1}`, exit: "Success" }))
  )
  // The broken one ended, saying why; its message is kept as it was, and named in the log.
  const end = ends.find((e) => e.key === broken)!
  expect(end.exit).toBe("Failure")
  expect(end.cause).toMatch(/could not be read and was set aside in switchboard_workflow_quarantine: payload is not JSON/)
  expect(quarantined).toEqual([{ id: expect.any(String), payload: garbage, reason: expect.stringMatching(/^payload is not JSON/) }])
  expect(output).toContain(`Set aside stored message ${quarantined[0]!.id} of Workflow/Switchboard/Video`)
}

describe("one stored message that cannot be read", { timeout: 360_000 }, () => {
  it("sqlite: a restarted runner sets it aside and finishes the other workflows", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-corrupt-db-"))
    dirs.push(dir)
    const file = Path.join(dir, "workflows.sqlite")
    await scenario(`sqlite:${file}`, sqliteStore(file))
  })

  it("Postgres: a restarted runner sets it aside and finishes the other workflows", async () => {
    const url = postgres!.database("corrupt")
    await scenario(url, postgresStore(url), { PORT: String(Ports.runner(3)) })
  })
})
