/**
 * The SQL `ApprovalStore`, on sqlite and on Postgres: a paused run goes in
 * and comes out once, only for approval ids it is waiting for; two
 * connections (two servers) share it; a row that does not decode answers
 * nothing.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { UiServer } from "@switchboard/agent"
import type { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { SqlApprovalStore, SqliteClient } from "../src/index.js"
import * as Ports from "@switchboard/test-support/Ports"
import { type Postgres, startPostgres } from "./postgres.js"

const sqliteFile = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-approvals-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => Path.join(dir, "approvals.sqlite")))

let postgres: Postgres | undefined
let databases = 0
beforeAll(() => {
  // A port of its own (test-support/Ports.ts): files run at once never share one.
  postgres = startPostgres(Ports.postgres.sqlApprovalStore())
}, 60_000)
afterAll(() => postgres?.stop())

/** One database, and a client layer per server on it. */
const databasesOf = {
  sqlite: Effect.map(sqliteFile, (filename) => () => SqliteClient.layer({ filename })),
  Postgres: Effect.sync(() => {
    const url = Redacted.make(postgres!.database(`approvals_${++databases}`))
    return () => PgClient.layer({ url })
  })
}

/** A store on a connection of its own, as another server would have. */
const server = (client: Layer.Layer<SqlClient.SqlClient, SqlError | ConfigurationError>) =>
  Effect.map(Layer.build(Layer.provideMerge(SqlApprovalStore.layer, client)), (context) => ({
    store: Context.get(context, UiServer.ApprovalStore),
    sql: Context.get(context, SqlClient.SqlClient)
  }))

const paused: UiServer.Paused = {
  transcript: [{ role: "user", content: "Use delete_file" }, {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_1", type: "function", function: { name: "delete_file", arguments: "{\"path\":\"a\"}" } }]
  }],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  trace: { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" },
  pending: ["approval-1"]
}

for (const [name, database] of Object.entries(databasesOf)) {
  describe(`SqlApprovalStore on ${name}`, () => {
    it.live("keeps a paused run for another server, gives it once, only for a pending approval id", () =>
      Effect.gen(function*() {
        const client = yield* database
        const asker = yield* server(client())
        const answerer = yield* server(client())
        yield* asker.store.put("chat-1", { ...paused, pending: ["older"] })
        yield* asker.store.put("chat-1", paused)
        expect(yield* answerer.store.take("chat-1", ["forged"])).toBeUndefined()
        expect(yield* answerer.store.take("chat-1", ["older"])).toBeUndefined()
        expect(yield* answerer.store.take("other-chat", ["approval-1"])).toBeUndefined()
        expect(yield* answerer.store.take("chat-1", ["approval-1"])).toEqual(paused)
        expect(yield* asker.store.take("chat-1", ["approval-1"])).toBeUndefined()
      }).pipe(Effect.scoped))

    it.live("a row that does not decode answers nothing", () =>
      Effect.gen(function*() {
        const client = yield* database
        const { sql, store } = yield* server(client())
        yield* store.put("chat-2", paused)
        yield* sql`UPDATE ${sql(SqlApprovalStore.table)} SET paused = ${"{\"transcript\":5}"}`
        expect(yield* store.take("chat-2", [])).toBeUndefined()
      }).pipe(Effect.scoped))
  })
}
