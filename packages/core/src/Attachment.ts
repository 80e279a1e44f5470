/**
 * Image inputs for chat (spec 2.2): an http(s) address, or bytes turned into
 * a base64 data URI with their media type, sniffed from the first bytes when
 * not given. No Node or DOM API: files and `Blob`s are read by the platform
 * packages (`NodeAttachment.fromFile`).
 *
 * @since 0.1.0
 */
import * as Base64 from "effect/encoding/Base64"
import * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { count } from "./internal/checks.js"
import * as Protocol from "./Protocol.js"
import type { ConfigurationError } from "./SwitchboardError.js"

/**
 * An attachment could not be made: what it came from (`source`: the URL, the
 * path, or `bytes`) and why.
 *
 * @since 0.1.0
 * @category errors
 */
export class AttachmentError extends Schema.TaggedError<AttachmentError>()("AttachmentError", {
  source: Schema.String,
  reason: Schema.Literals(["InvalidUrl", "TooLarge", "UnknownMediaType", "NotFound", "Unreadable"]),
  message: Schema.String
}) {}

/**
 * How closely the model should look at the image.
 *
 * @since 0.1.0
 * @category models
 */
export type Detail = "auto" | "low" | "high"

/**
 * An image ready to send: an http(s) URL or a data URI. `mediaType` and
 * `byteLength` are known when it was made from bytes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Attachment {
  readonly _tag: "Attachment"
  readonly url: string
  readonly mediaType?: string | undefined
  readonly byteLength?: number | undefined
  readonly detail?: Detail | undefined
}

/**
 * The largest attachment accepted unless `maxBytes` says otherwise: 20 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxBytes = 20 * 1024 * 1024

/**
 * What `fromBytes` takes: the media type, the size limit, the detail and a
 * name for errors.
 *
 * @since 0.1.0
 * @category models
 */
export interface FromBytesOptions {
  /** e.g. `image/png`. Sniffed from the bytes when not given. */
  readonly mediaType?: string | undefined
  /** Default `defaultMaxBytes` (20 MiB). */
  readonly maxBytes?: number | undefined
  readonly detail?: Detail | undefined
  /** What the bytes are, as errors name it. Default `bytes`. */
  readonly source?: string | undefined
}

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, offset = 0): boolean =>
  bytes.length >= offset + signature.length && signature.every((byte, i) => bytes[offset + i] === byte)

const ascii = (text: string) => Array.from(text, (c) => c.charCodeAt(0))

const signatures: ReadonlyArray<readonly [string, (bytes: Uint8Array) => boolean]> = [
  ["image/png", (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
  ["image/jpeg", (b) => startsWith(b, [0xff, 0xd8, 0xff])],
  ["image/gif", (b) => startsWith(b, ascii("GIF87a")) || startsWith(b, ascii("GIF89a"))],
  ["image/webp", (b) => startsWith(b, ascii("RIFF")) && startsWith(b, ascii("WEBP"), 8)]
]

/**
 * The media type of PNG, JPEG, GIF and WebP bytes, from their magic numbers;
 * `undefined` for anything else.
 *
 * @since 0.1.0
 * @category sniffing
 */
export const sniffMediaType = (bytes: Uint8Array): string | undefined =>
  signatures.find(([, matches]) => matches(bytes))?.[0]

const mediaTypePattern = /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/i

const mebibytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

/**
 * The error for `size` bytes over `maxBytes`; platform readers use it to stop
 * reading as soon as the limit is passed.
 *
 * @since 0.1.0
 * @category errors
 */
export const tooLarge = (source: string, size: number, maxBytes: number): AttachmentError =>
  new AttachmentError({
    source,
    reason: "TooLarge",
    message: `${source} is ${size} bytes (${mebibytes(size)}), over the maximum of ${maxBytes} bytes (${
      mebibytes(maxBytes)
    })`
  })

const withDetail = (detail: Detail | undefined) => (detail === undefined ? {} : { detail })

/**
 * The `maxBytes` option of a reader, checked where it enters: a count of 1
 * or more (`defaultMaxBytes` when not given), else a `ConfigurationError`
 * naming `maxBytes` (NaN would let every size through).
 *
 * @since 1.1.0
 * @category constructors
 */
export const maxBytesOf = (options: { readonly maxBytes?: number | undefined }): Result.Result<number, ConfigurationError> =>
  count("maxBytes", options.maxBytes ?? defaultMaxBytes, 1)

/**
 * Bytes → a data URI attachment. Fails when the bytes are over `maxBytes`,
 * or when no media type is given and the bytes are not a PNG, JPEG, GIF or
 * WebP image.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromBytes = (
  bytes: Uint8Array,
  options: FromBytesOptions = {}
): Effect.Effect<Attachment, AttachmentError | ConfigurationError> => {
  const source = options.source ?? "bytes"
  const checked = maxBytesOf(options)
  if (checked._tag === "Failure") return Effect.fail(checked.failure)
  const maxBytes = checked.success
  if (bytes.byteLength > maxBytes) return Effect.fail(tooLarge(source, bytes.byteLength, maxBytes))
  const mediaType = options.mediaType?.trim().toLowerCase() ?? sniffMediaType(bytes)
  if (mediaType === undefined || !mediaTypePattern.test(mediaType)) {
    return Effect.fail(
      new AttachmentError({
        source,
        reason: "UnknownMediaType",
        message: mediaType === undefined ?
          `${source} is not a PNG, JPEG, GIF or WebP image; give its mediaType` :
          `${source}: mediaType "${options.mediaType}" is not of the form type/subtype`
      })
    )
  }
  return Effect.succeed({
    _tag: "Attachment",
    url: `data:${mediaType};base64,${Base64.encode(bytes)}`,
    mediaType,
    byteLength: bytes.byteLength,
    ...withDetail(options.detail)
  })
}

const isImageAddress: (url: string) => boolean = Schema.is(Protocol.ImageAddress)

/**
 * An image by address: an http(s) URL (fetched by the service) or a data URI.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromUrl = (
  url: string,
  options: { readonly detail?: Detail | undefined } = {}
): Effect.Effect<Attachment, AttachmentError> => {
  if (!isImageAddress(url)) {
    return Effect.fail(
      new AttachmentError({
        source: url.length > 80 ? `${url.slice(0, 80)}…` : url,
        reason: "InvalidUrl",
        message: "an image URL must be an http(s) URL or a data URI of the form data:<media type>;base64,<data>"
      })
    )
  }
  const mediaType = Protocol.parseDataUri(url)?.mediaType
  return Effect.succeed({
    _tag: "Attachment",
    url,
    ...(mediaType === undefined ? {} : { mediaType }),
    ...withDetail(options.detail)
  })
}

/**
 * The `image_url` content part of an attachment.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toContentPart = (attachment: Attachment): Protocol.ContentPart => ({
  type: "image_url",
  image_url: { url: attachment.url, ...withDetail(attachment.detail) }
})

/**
 * A user message of a text part followed by one image part per attachment.
 *
 * @example
 * ```ts
 * import * as Attachment from "@switchboard/core/Attachment"
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Effect from "effect/Effect"
 *
 * const program = Effect.gen(function*() {
 *   const image = yield* Attachment.fromUrl("https://example.com/cat.jpg")
 *   return yield* Chat.create({ model: "gpt-4o-mini", messages: [Attachment.message("What is this?", image)] })
 * })
 * ```
 * @since 0.1.0
 * @category conversions
 */
export const message = (text: string, ...attachments: ReadonlyArray<Attachment>): Protocol.Message => ({
  role: "user",
  content: [{ type: "text", text }, ...attachments.map(toContentPart)]
})
