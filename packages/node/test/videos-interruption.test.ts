/**
 * A paid task is never unrecorded after an interruption (issue 33, case 5):
 * a caller's timeout fires while the submission's reply is in flight (the
 * emulator sent its headers, so the task exists, and holds the body back).
 * `Videos.submit` waits for the reply and records the task before the
 * interruption takes effect, for every journal. Over real HTTP to the
 * emulator, on the TestClock: the timeout and the emulator's delay fire
 * only when the test moves time.
 */
import { describe, expect, it } from "@effect/vitest"
import { TaskJournal, Videos } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { NodeSwitchboard } from "../src/index.js"
import { emulated, waitUntil } from "./fixtures.js"

const journals: ReadonlyArray<readonly [string, () => Partial<NodeSwitchboard.Options>]> = [
  ["memory", () => ({ journal: TaskJournal.layerMemory })],
  ["directory", () => ({ journalDirectory: mkdtempSync(join(tmpdir(), "switchboard-interrupted-submit-")) })]
]

describe("Videos.submit interrupted while its reply is in flight", () => {
  for (const [name, options] of journals) {
    it.effect(`the ${name} journal records the task all the same`, () =>
      Effect.gen(function*() {
        const emulator = yield* Emulator.Emulator
        yield* emulator.setFaults({ paths: ["/v1/chat/completions"], script: [{ _tag: "Delay", delay: "10 seconds", afterHeaders: true }] })
        const start = yield* Clock.currentTimeMillis
        const fiber = yield* Effect.forkChild(Videos.submit({ model: Emulator.videoModel, prompt: "interrupted" }).pipe(Effect.timeout("1 second")))
        // The reply's headers came and its body is held: the task exists and is paid for.
        yield* waitUntil(RecordingClock.sleeps, (wakes) => wakes.includes(start + 10_000) && wakes.includes(start + 1_000))
        yield* TestClock.adjust("1 second")
        yield* TestClock.adjust("10 seconds")
        yield* Fiber.await(fiber)
        const entries = yield* Effect.flatMap(TaskJournal.TaskJournal, (journal) => journal.list)
        expect(entries.map((e) => e.prompt)).toEqual(["interrupted"])
        // The id recorded is the service's.
        expect((yield* Videos.status(entries[0]!.taskId))._tag).not.toBe("Failed")
      }).pipe(Effect.provide(emulated(options()))))
  }
})
