/**
 * Image generation through chat with `image2`: the reply's content is one
 * markdown image per requested image (`n`), linking to a PNG of the requested
 * size served under `/files/`. Derived from the request only: the same
 * request gives the same links.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import * as Conversation from "./conversation.js"
import { shortHash } from "./hash.js"
import * as Files from "./files.js"
import * as Images from "./images.js"
import { contentText } from "./text.js"

/** Markdown alt text must not contain square brackets or line breaks. */
const altText = (text: string) => text.replace(/[[\]\n\r]+/g, " ").trim().slice(0, 200)

/** The reply content: `![…](http://127.0.0.1:PORT/files/img_….png)` per image. */
export const content = (request: Protocol.ChatRequest, baseUrl: string): string => {
  const last = Conversation.lastUserIndex(request.messages)
  const user = request.messages[last]
  const prompt = contentText(user?.content)
  const size = request.size ?? "1024x1024"
  const [width, height] = size.split("x").map(Number) as [number, number]
  const settings = `${size}, ${request.quality ?? "standard"}${request.style ? `, ${request.style}` : ""}`
  const source = Images.describe(user, last)
  // The error path of clients: a prompt with the word "refuse" gets no image.
  if (/\brefuse\b/i.test(prompt)) return `I can't create an image for "${altText(prompt)}".`
  const n = request.n ?? 1
  return Array.from({ length: n }, (_, i) => {
    const hash = shortHash(`${prompt}|${settings}|${source}|${i}`)
    const alt = altText(`Image ${i + 1} of ${n} for "${prompt}" (${settings})${source ? ` from: ${source}` : ""}`)
    return `![${alt}](${baseUrl}${Files.imagePath(hash, width, height)})`
  }).join("\n")
}
