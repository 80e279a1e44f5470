import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Attachment, Chat } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { NodeAttachment } from "../src/index.js"
import { emulated } from "./fixtures.js"

/** A PNG signature and IHDR chunk, then padding: 1,000 bytes in all. */
const png = (() => {
  const bytes = new Uint8Array(1000)
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52])
  for (let i = 16; i < bytes.length; i++) bytes[i] = i % 251
  return bytes
})()

/** A temporary directory for the test's scope, removed afterwards. */
const tempDir = Effect.acquireRelease(
  Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "switchboard-attachments-"))),
  (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
)

const writeFile = (path: string, bytes: Uint8Array | string) => Effect.promise(() => Fs.writeFile(path, bytes))

describe("NodeAttachment.fromFile", () => {
  it.effect("reads a file into a data URI with its sniffed media type", () =>
    Effect.gen(function*() {
      const path = Path.join(yield* tempDir, "photo.bin")
      yield* writeFile(path, png)
      const attachment = yield* NodeAttachment.fromFile(path, { detail: "low" })
      expect(attachment).toMatchObject({ mediaType: "image/png", byteLength: 1000, detail: "low" })
      expect(attachment.url).toBe(`data:image/png;base64,${Buffer.from(png).toString("base64")}`)
    }))

  it.effect("a given media type is used for bytes that cannot be sniffed", () =>
    Effect.gen(function*() {
      const path = Path.join(yield* tempDir, "drawing.svg")
      yield* writeFile(path, `<svg xmlns="http://www.w3.org/2000/svg"/>`)
      const error = yield* Effect.flip(NodeAttachment.fromFile(path))
      expect(error).toMatchObject({ _tag: "AttachmentError", reason: "UnknownMediaType", source: path })
      expect((yield* NodeAttachment.fromFile(path, { mediaType: "image/svg+xml" })).mediaType).toBe("image/svg+xml")
    }))

  it.effect("a missing file is a NotFound error naming the path", () =>
    Effect.gen(function*() {
      const path = Path.join(Os.tmpdir(), "switchboard-no-such-file.png")
      const error = yield* Effect.flip(NodeAttachment.fromFile(path))
      expect(error).toMatchObject({ _tag: "AttachmentError", reason: "NotFound", source: path })
      expect(error.message).toContain(path)
    }))

  it.effect("a path that cannot be read as a file (a directory, for root too) is an Unreadable error naming it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const error = yield* Effect.flip(NodeAttachment.fromFile(dir))
      expect(error).toMatchObject({ _tag: "AttachmentError", reason: "Unreadable", source: dir })
      expect(error.message).toContain(dir)
    }))

  it.effect("a file over maxBytes is refused, with both sizes in the message", () =>
    Effect.gen(function*() {
      const path = Path.join(yield* tempDir, "big.png")
      yield* writeFile(path, png)
      const error = yield* Effect.flip(NodeAttachment.fromFile(path, { maxBytes: 999 }))
      expect(error).toMatchObject({ _tag: "AttachmentError", reason: "TooLarge", source: path })
      expect(error.message).toContain("1000 bytes")
      expect(error.message).toContain("999 bytes")
      expect((yield* NodeAttachment.fromFile(path, { maxBytes: 1000 })).byteLength).toBe(1000)
    }))
})

describe("attachments reach the service intact", () => {
  it.effect("a file's image part, streamed: the reply names its media type and byte count", () =>
    Effect.gen(function*() {
      const path = Path.join(yield* tempDir, "photo.png")
      yield* writeFile(path, png)
      const photo = yield* NodeAttachment.fromFile(path)
      const link = yield* Attachment.fromUrl("https://example.com/cat.jpg")
      const text = yield* Stream.runCollect(
        Chat.streamText({ model: "gpt-4o-mini", messages: [Attachment.message("Describe these", photo, link)] })
      )
      const reply = text.join("")
      expect(reply).toContain("Received 2 images")
      expect(reply).toContain("image/png 1000 bytes")
      expect(reply).toContain("https://example.com/cat.jpg")
    }).pipe(Effect.provide(emulated())))
})
