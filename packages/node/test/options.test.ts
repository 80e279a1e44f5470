/**
 * Every duration and count a caller passes is checked where it enters
 * (issue 33, case 11): a value that cannot work is a `ConfigurationError`
 * naming it, before any request; never a defect, never a limit read as 0.
 * Over real HTTP to the emulator, which counts what was sent.
 */
import { describe, expect, it } from "@effect/vitest"
import { Attachment, Chat, Embeddings, Videos } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeAttachment } from "../src/index.js"
import { emulated } from "./fixtures.js"

const badDurations: ReadonlyArray<unknown> = [NaN, -1, "-1 seconds", "10 minuts", { minutes: NaN }]

describe("options are checked where they enter", () => {
  it.effect("Videos.poll's deadline: NaN, negative or unreadable is a ConfigurationError naming it, with no status call", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const taskId = yield* Videos.submit({ model: Emulator.videoModel, prompt: "checked deadline" })
      const before = yield* emulator.requestCount
      for (const deadline of badDurations) {
        // The type says Duration.Input; a caller's config file does not.
        const error = yield* Effect.flip(Stream.runDrain(Videos.poll(taskId, { deadline: deadline as never })))
        expect(error, JSON.stringify(deadline)).toMatchObject({ _tag: "ConfigurationError", field: "deadline" })
      }
      expect(yield* emulator.requestCount).toBe(before)
    }).pipe(Effect.provide(emulated())))

  it.effect("Embeddings' batchSize and concurrency fail as every option does: ConfigurationError, nothing sent", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      for (const [field, options] of [["batchSize", { batchSize: 0 }], ["batchSize", { batchSize: NaN }], ["concurrency", { concurrency: 1.5 }]] as const) {
        const error = yield* Effect.flip(Embeddings.embedMany(["a", "b"], { model: Emulator.embeddingModel, ...options }))
        expect(error).toMatchObject({ _tag: "ConfigurationError", field })
      }
      expect(yield* emulator.requestCount).toBe(0)
    }).pipe(Effect.provide(emulated())))

  it.effect("Chat.accumulate's maxCharacters: NaN or 0 is a ConfigurationError", () =>
    Effect.gen(function*() {
      for (const maxCharacters of [NaN, 0, -1]) {
        const stream = Chat.stream({ model: Emulator.chatMiniModel, messages: [{ role: "user", content: "hi" }] })
        const error = yield* Effect.flip(Chat.accumulate(stream, { maxCharacters }))
        expect(error).toMatchObject({ _tag: "ConfigurationError", field: "maxCharacters" })
      }
    }).pipe(Effect.provide(emulated())))

  it.effect("an attachment's maxBytes: NaN, 0 or fractional is a ConfigurationError, not a limit that lets every size through", () =>
    Effect.gen(function*() {
      const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0])
      const file = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "max-bytes-")), "tiny.png")
      Fs.writeFileSync(file, png)
      for (const maxBytes of [NaN, 0, 1.5, -1]) {
        const fromBytes = yield* Effect.flip(Attachment.fromBytes(png, { maxBytes }))
        expect(fromBytes, String(maxBytes)).toMatchObject({ _tag: "ConfigurationError", field: "maxBytes" })
        const fromFile = yield* Effect.flip(NodeAttachment.fromFile(file, { maxBytes }))
        expect(fromFile, String(maxBytes)).toMatchObject({ _tag: "ConfigurationError", field: "maxBytes" })
      }
      expect((yield* Attachment.fromBytes(png)).mediaType).toBe("image/png")
    }))
})
