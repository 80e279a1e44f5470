/**
 * Image parts of user messages: validated strictly (the service rejects a
 * data URI whose base64 is broken) and summarised in the reply so a test can
 * tell an image arrived intact.
 *
 * @internal
 */
import * as Protocol from "@switchboard/core/Protocol"
import { ApiError, badRequest } from "./errors.js"

type Message = Protocol.ChatRequest["messages"][number]

interface ImageInfo {
  readonly url: string
  readonly param: string
}

const imagesOf = (message: Message, index: number): ReadonlyArray<ImageInfo> =>
  message.role === "user" && typeof message.content !== "string"
    ? message.content.flatMap((part, j) =>
      part.type === "image_url" ? [{ url: part.image_url.url, param: `messages[${index}].content[${j}].image_url.url` }] : []
    )
    : []

// Padding only at the end and no length of 4n+1, which no encoder produces.
const strictBase64 = (payload: string): boolean => {
  const compact = payload.replace(/\s+/g, "")
  return compact.length > 0 && compact.length % 4 !== 1 && /^[A-Za-z0-9+/]+={0,2}$/.test(compact)
}

const decodedBytes = (url: string): { readonly mediaType: string; readonly bytes: number } | undefined => {
  const parsed = Protocol.parseDataUri(url)
  return parsed && strictBase64(parsed.base64)
    ? { mediaType: parsed.mediaType, bytes: Buffer.from(parsed.base64, "base64").length }
    : undefined
}

/** The first image part of any user message that is not a usable image, as a 400. */
export const validate = (messages: ReadonlyArray<Message>): ApiError | undefined => {
  for (const [i, message] of messages.entries()) {
    for (const image of imagesOf(message, i)) {
      if (/^https?:\/\//i.test(image.url)) continue
      if (decodedBytes(image.url) === undefined) {
        return badRequest(
          `Invalid value for '${image.param}': must be an http(s) URL or a data URI of the form data:<media type>;base64,<valid base64>`,
          image.param,
          "invalid_image_url"
        )
      }
    }
  }
  return undefined
}

const describeOne = (url: string): string => {
  const data = decodedBytes(url)
  return data ? `${data.mediaType} ${data.bytes} bytes (data URI)` : `${url} (URL)`
}

/** `Received 2 images: image/png 68 bytes (data URI), https://… (URL).` or `""`. */
export const describe = (message: Message | undefined, index: number): string => {
  const images = message ? imagesOf(message, index) : []
  if (images.length === 0) return ""
  const noun = images.length === 1 ? "image" : "images"
  return `Received ${images.length} ${noun}: ${images.map((image) => describeOne(image.url)).join(", ")}.`
}
