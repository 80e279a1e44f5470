/**
 * The journal of the default setup (issue 26, case 12): `layerConfig()`
 * keeps submitted tasks on disk, so the next process finds them; it opens
 * its directory only when a task is submitted; `layer()`'s memory journal
 * warns at the first task. Across real HTTP to the emulator, real files.
 */
import { describe, expect, it } from "@effect/vitest"
import { Models, Videos } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeSwitchboard, NodeTaskJournal } from "../src/index.js"

const temporaryDirectory = () => mkdtempSync(join(tmpdir(), "switchboard-default-journal-"))

/** `layerConfig()` as a program started with `env` would build it. */
const fromEnvironment = (env: Record<string, string>) =>
  Layer.unwrap(Effect.map(Emulator.Emulator, (emulator) =>
    NodeSwitchboard.layerConfig().pipe(
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({
        env: { SWITCHBOARD_BASE_URL: emulator.url, SWITCHBOARD_API_KEY: emulator.apiKey, ...env }
      })))
    )))

const submissions = Effect.map(
  Effect.flatMap(Emulator.Emulator, (e) => e.requests),
  (requests) => requests.filter((r) => r.path === "/v1/chat/completions").length
)

describe("NodeSwitchboard.layerConfig's journal", () => {
  it.live("a submitted task outlives its process: the next one's resumePending finds it", () =>
    Effect.gen(function*() {
      const journal = join(temporaryDirectory(), "tasks")
      const env = { SWITCHBOARD_JOURNAL_DIR: journal }
      // One process submits and stops (its layer, memory included, is gone)…
      const taskId = yield* Effect.scoped(
        Effect.provide(Videos.submit({ model: "video-1", prompt: "A slow paper boat" }), fromEnvironment(env))
      )
      // …the next one finds the task.
      const found = yield* Effect.scoped(
        Effect.provide(Effect.map(Videos.resumePending(), ({ pending }) => pending.map((p) => p.entry.taskId)), fromEnvironment(env))
      )
      expect(found).toEqual([taskId])
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("a program that submits no task never touches the journal's directory", () =>
    Effect.gen(function*() {
      const journal = join(temporaryDirectory(), "tasks")
      yield* Effect.provide(Models.list, fromEnvironment({ SWITCHBOARD_JOURNAL_DIR: journal }))
      expect(existsSync(journal)).toBe(false)
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("a directory that cannot be made: the layer builds, the submission fails with JournalError naming it, nothing sent", () =>
    Effect.gen(function*() {
      const file = join(temporaryDirectory(), "a-file")
      writeFileSync(file, "")
      const journal = join(file, "tasks")
      const error = yield* Effect.flip(
        Effect.provide(Videos.submit({ model: "video-1", prompt: "A boat" }), fromEnvironment({ SWITCHBOARD_JOURNAL_DIR: journal }))
      )
      expect(error).toMatchObject({ _tag: "JournalError", message: expect.stringContaining(journal) })
      expect(yield* submissions).toBe(0)
    }).pipe(Effect.provide(Emulator.layer())))

  it("without SWITCHBOARD_JOURNAL_DIR: the user's state directory, by platform", () => {
    expect(NodeTaskJournal.stateDirectory("linux", {}, "/home/ann")).toBe("/home/ann/.local/state")
    expect(NodeTaskJournal.stateDirectory("linux", { XDG_STATE_HOME: "/var/ann" }, "/home/ann")).toBe("/var/ann")
    expect(NodeTaskJournal.stateDirectory("linux", { XDG_STATE_HOME: "relative" }, "/home/ann")).toBe("/home/ann/.local/state")
    expect(NodeTaskJournal.stateDirectory("darwin", {}, "/Users/ann")).toBe("/Users/ann/Library/Application Support")
    expect(NodeTaskJournal.stateDirectory("win32", { LOCALAPPDATA: "C:\\Users\\ann\\AppData\\Local" }, "C:\\Users\\ann"))
      .toBe("C:\\Users\\ann\\AppData\\Local")
    expect(NodeTaskJournal.stateDirectory("win32", {}, "C:\\Users\\ann")).toBe("C:\\Users\\ann\\AppData\\Local")
  })

  it.effect("SWITCHBOARD_JOURNAL_DIR wins; empty or missing means the state directory", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.provideService(NodeTaskJournal.defaultDirectory, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
      const fallback = join(NodeTaskJournal.stateDirectory(), "switchboard", "tasks")
      expect(yield* read({ SWITCHBOARD_JOURNAL_DIR: "/srv/tasks" })).toBe("/srv/tasks")
      expect(yield* read({ SWITCHBOARD_JOURNAL_DIR: "" })).toBe(fallback)
      expect(yield* read({})).toBe(fallback)
    }))
})

describe("NodeSwitchboard.layer's memory journal", () => {
  it.live("warns once, at the first task, that a crash loses its tasks", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel === "Warn") warnings.push(String(message))
      })
      const emulator = yield* Emulator.Emulator
      yield* Effect.gen(function*() {
        yield* Videos.submit({ model: "video-1", prompt: "A boat" })
        yield* Videos.submit({ model: "video-1", prompt: "A boat" })
      }).pipe(
        Effect.provide(NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey })),
        Effect.provide(Logger.layer([logger]))
      )
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain("journalDirectory")
    }).pipe(Effect.provide(Emulator.layer())))
})
