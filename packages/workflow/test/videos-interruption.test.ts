/**
 * `Videos.submit` interrupted while its reply is in flight records the task
 * in the SQL journal too (issue 33, case 5; the memory and directory
 * journals: `packages/node/test/videos-interruption.test.ts`). Over real
 * HTTP to the emulator, which sends the reply's headers (the task exists)
 * and holds its body; on the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { TaskJournal, Videos } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { SqliteClient, SqlTaskJournal } from "../src/index.js"
import { eventually } from "./journalSuite.js"

const sdk = (filename: string) =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) =>
      NodeSwitchboard.layer({
        baseUrl: emulator.url,
        apiKey: emulator.apiKey,
        journal: Layer.orDie(SqlTaskJournal.layer.pipe(Layer.provide(SqliteClient.layer({ filename }))))
      }))
  ).pipe(Layer.provideMerge(Emulator.layer()), Layer.provideMerge(RecordingClock.layer))

describe("Videos.submit interrupted while its reply is in flight", () => {
  it.effect("the SQL journal records the task all the same", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ paths: ["/v1/chat/completions"], script: [{ _tag: "Delay", delay: "10 seconds", afterHeaders: true }] })
      const start = yield* Clock.currentTimeMillis
      const fiber = yield* Effect.forkChild(Videos.submit({ model: Emulator.videoModel, prompt: "interrupted" }).pipe(Effect.timeout("1 second")))
      yield* eventually(RecordingClock.sleeps, (wakes) => wakes.includes(start + 10_000) && wakes.includes(start + 1_000))
      yield* TestClock.adjust("1 second")
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.await(fiber)
      const entries = yield* Effect.flatMap(TaskJournal.TaskJournal, (journal) => journal.list)
      expect(entries.map((e) => e.prompt)).toEqual(["interrupted"])
    }).pipe(Effect.provide(sdk(Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-sql-interrupted-")), "journal.sqlite")))))
})
