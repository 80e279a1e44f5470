/**
 * Image attachments from files: read as a stream that stops as soon as the
 * size limit is passed, so an oversized file is never held in memory.
 *
 * @since 0.1.0
 */
import * as Attachment from "@switchboard/core/Attachment"
import { joinBytes } from "@switchboard/core/internal/bytes"
import type { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Stream from "effect/Stream"
import * as Platform from "./internal/platform.js"

/**
 * What `fromFile` takes: the media type, the size limit and the detail.
 *
 * @since 0.1.0
 * @category models
 */
export interface FromFileOptions {
  /** e.g. `image/png`. Sniffed from the first bytes when not given. */
  readonly mediaType?: string | undefined
  /** Default `Attachment.defaultMaxBytes` (20 MiB). */
  readonly maxBytes?: number | undefined
  readonly detail?: Attachment.Detail | undefined
}

const unreadable = (path: string, why: string) =>
  new Attachment.AttachmentError({ source: path, reason: "Unreadable", message: `${path} cannot be read: ${why}` })

const fromPlatformError = (path: string) => (error: PlatformError.PlatformError): Attachment.AttachmentError =>
  error.reason._tag === "NotFound" ?
    new Attachment.AttachmentError({ source: path, reason: "NotFound", message: `${path} does not exist` }) :
    unreadable(path, error.message)

/** Every byte of `path`, failing once more than `maxBytes` have been read. */
const readAtMost = (fs: FileSystem.FileSystem, path: string, maxBytes: number) => {
  const parts: Array<Uint8Array> = []
  let total = 0
  // One byte past the limit is enough to know the file is too large.
  return fs.stream(path, { bytesToRead: maxBytes + 1 }).pipe(
    Stream.mapError(fromPlatformError(path)),
    Stream.runForEach((bytes) => {
      total += bytes.length
      if (total > maxBytes) return Effect.fail(Attachment.tooLarge(path, total, maxBytes))
      parts.push(bytes)
      return Effect.void
    }),
    Effect.map(() => joinBytes(parts, total))
  )
}

/**
 * A file → a data URI attachment. A missing file, a directory or an
 * unreadable file fails with an `AttachmentError` naming the path, as does a
 * file over `maxBytes` (checked before reading and again while reading, in
 * case the file grows) or one that is not a PNG, JPEG, GIF or WebP image
 * when no `mediaType` is given.
 *
 * @example
 * ```ts
 * import * as Attachment from "@switchboard/core/Attachment"
import type { ConfigurationError } from "@switchboard/core/SwitchboardError"
 * import * as Chat from "@switchboard/core/Chat"
 * import * as NodeAttachment from "@switchboard/node/NodeAttachment"
 * import * as Effect from "effect/Effect"
 *
 * const program = Effect.gen(function*() {
 *   const photo = yield* NodeAttachment.fromFile("photo.jpg")
 *   return yield* Chat.create({ model: "gpt-4o-mini", messages: [Attachment.message("What is in this photo?", photo)] })
 * })
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const fromFile: (
  path: string,
  options?: FromFileOptions
) => Effect.Effect<Attachment.Attachment, Attachment.AttachmentError | ConfigurationError> = Effect.fn("NodeAttachment.fromFile")(
  function*(path: string, options: FromFileOptions = {}) {
    const fs = yield* FileSystem.FileSystem
    const maxBytes = yield* Effect.fromResult(Attachment.maxBytesOf(options))
    const info = yield* Effect.mapError(fs.stat(path), fromPlatformError(path))
    if (info.type !== "File") return yield* unreadable(path, `it is a ${info.type.toLowerCase()}, not a file`)
    if (Number(info.size) > maxBytes) return yield* Attachment.tooLarge(path, Number(info.size), maxBytes)
    const bytes = yield* readAtMost(fs, path, maxBytes)
    return yield* Attachment.fromBytes(bytes, { ...options, maxBytes, source: path })
  },
  Effect.provide(Platform.fileSystem)
)
