/**
 * Image attachments from a `Blob` or a `File` (an `<input type="file">`, a
 * drop, a paste, a canvas's `toBlob`): the bytes become a data URI with the
 * blob's media type, or the one sniffed from the bytes when the blob has none.
 *
 * @since 0.1.0
 */
import * as Attachment from "@switchboard/core/Attachment"
import type { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as Effect from "effect/Effect"

/**
 * What `fromBlob` takes: the media type, the size limit and the detail.
 *
 * @since 0.1.0
 * @category models
 */
export interface FromBlobOptions {
  /**
   * e.g. `image/png`. Default: the blob's own `type` when it is an `image/*`
   * type, else sniffed from the first bytes (PNG, JPEG, GIF, WebP).
   */
  readonly mediaType?: string | undefined
  /** Default `Attachment.defaultMaxBytes` (20 MiB). Checked before reading. */
  readonly maxBytes?: number | undefined
  readonly detail?: Attachment.Detail | undefined
}

/** A `File`'s name, for error messages; `blob` for a plain `Blob`. */
const sourceOf = (blob: Blob): string => {
  const name = (blob as Partial<File>).name
  return typeof name === "string" && name !== "" ? name : "blob"
}

/** The blob's declared type without parameters, when it names an image. */
const declaredImageType = (blob: Blob): string | undefined => {
  const type = blob.type.split(";")[0]!.trim().toLowerCase()
  return type.startsWith("image/") ? type : undefined
}

/**
 * A `Blob` or `File` → a data URI attachment. Fails with an
 * `AttachmentError` naming the file when it is over `maxBytes` (before any
 * byte is read), when it cannot be read, or when it declares no image type
 * and its bytes are not a PNG, JPEG, GIF or WebP image.
 *
 * @example
 * ```ts
 * import * as BrowserAttachment from "@switchboard/browser/BrowserAttachment"
 * import * as Attachment from "@switchboard/core/Attachment"
import type { ConfigurationError } from "@switchboard/core/SwitchboardError"
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Effect from "effect/Effect"
 *
 * const describe = (file: Blob) =>
 *   Effect.gen(function*() {
 *     const photo = yield* BrowserAttachment.fromBlob(file)
 *     return yield* Chat.create({ model: "gpt-4o-mini", messages: [Attachment.message("What is in this photo?", photo)] })
 *   })
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const fromBlob: (
  blob: Blob,
  options?: FromBlobOptions
) => Effect.Effect<Attachment.Attachment, Attachment.AttachmentError | ConfigurationError> = Effect.fn("BrowserAttachment.fromBlob")(
  function*(blob: Blob, options: FromBlobOptions = {}) {
    const source = sourceOf(blob)
    const maxBytes = yield* Effect.fromResult(Attachment.maxBytesOf(options))
    if (blob.size > maxBytes) return yield* Effect.fail(Attachment.tooLarge(source, blob.size, maxBytes))
    const buffer = yield* Effect.tryPromise({
      try: () => blob.arrayBuffer(),
      catch: (cause) =>
        new Attachment.AttachmentError({
          source,
          reason: "Unreadable",
          message: `${source} cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`
        })
    })
    return yield* Attachment.fromBytes(new Uint8Array(buffer), {
      mediaType: options.mediaType ?? declaredImageType(blob),
      maxBytes,
      detail: options.detail,
      source
    })
  }
)
