import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Attachment from "../src/Attachment.js"
import { encoder } from "../src/internal/validate.js"
import * as Protocol from "../src/Protocol.js"

const bytes = (...values: ReadonlyArray<number | string>) =>
  Uint8Array.from(values.flatMap((v) => (typeof v === "string" ? Array.from(v, (c) => c.charCodeAt(0)) : [v])))

const png = bytes(0x89, "PNG", 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, "IHDR")
const jpeg = bytes(0xff, 0xd8, 0xff, 0xe0, 0, 0x10, "JFIF")
const gif87 = bytes("GIF87a", 1, 0, 1, 0)
const gif89 = bytes("GIF89a", 1, 0, 1, 0)
const webp = bytes("RIFF", 0x24, 0, 0, 0, "WEBPVP8 ")

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runSync(Effect.result(effect))

describe("Attachment", () => {
  it("sniffs PNG, JPEG, GIF and WebP from their magic bytes", () => {
    expect(Attachment.sniffMediaType(png)).toBe("image/png")
    expect(Attachment.sniffMediaType(jpeg)).toBe("image/jpeg")
    expect(Attachment.sniffMediaType(gif87)).toBe("image/gif")
    expect(Attachment.sniffMediaType(gif89)).toBe("image/gif")
    expect(Attachment.sniffMediaType(webp)).toBe("image/webp")
    expect(Attachment.sniffMediaType(bytes("RIFF", 0, 0, 0, 0, "WAVE"))).toBeUndefined()
    expect(Attachment.sniffMediaType(bytes("%PDF-1.7"))).toBeUndefined()
    expect(Attachment.sniffMediaType(png.subarray(0, 4))).toBeUndefined()
    expect(Attachment.sniffMediaType(new Uint8Array())).toBeUndefined()
  })

  it("bytes → a base64 data URI with the sniffed media type", () => {
    const attachment = Result.getOrThrow(run(Attachment.fromBytes(png)))
    expect(attachment).toMatchObject({ mediaType: "image/png", byteLength: png.length })
    expect(attachment.url).toBe(`data:image/png;base64,${Buffer.from(png).toString("base64")}`)
    expect(Protocol.parseDataUri(attachment.url)).toEqual({ mediaType: "image/png", base64: Buffer.from(png).toString("base64") })
  })

  it("a given media type wins over sniffing, and unknown bytes need one", () => {
    const svg = bytes("<svg xmlns='http://www.w3.org/2000/svg'/>")
    expect(Result.getOrThrow(run(Attachment.fromBytes(svg, { mediaType: "image/svg+xml" }))).mediaType).toBe("image/svg+xml")
    expect(Result.getOrThrow(Result.flip(run(Attachment.fromBytes(svg))))).toMatchObject({
      _tag: "AttachmentError",
      reason: "UnknownMediaType",
      source: "bytes"
    })
    expect(Result.getOrThrow(Result.flip(run(Attachment.fromBytes(svg, { mediaType: "svg" }))))).toMatchObject({
      reason: "UnknownMediaType",
      message: expect.stringContaining(`"svg"`)
    })
  })

  it("bytes over maxBytes fail with the sizes in the message; at the limit they pass", () => {
    const big = new Uint8Array(1025)
    big.set(png)
    const error = Result.getOrThrow(Result.flip(run(Attachment.fromBytes(big, { maxBytes: 1024, source: "photo.png" }))))
    expect(error).toMatchObject({ _tag: "AttachmentError", reason: "TooLarge", source: "photo.png" })
    expect(error.message).toContain("1025 bytes")
    expect(error.message).toContain("maximum of 1024 bytes")
    expect(Result.isSuccess(run(Attachment.fromBytes(big.subarray(0, 1024), { maxBytes: 1024 })))).toBe(true)
    expect(Attachment.defaultMaxBytes).toBe(20 * 1024 * 1024)
  })

  it("URLs: http(s) and data URIs pass, anything else fails", () => {
    expect(Result.getOrThrow(run(Attachment.fromUrl("https://example.com/cat.jpg", { detail: "low" })))).toEqual({
      _tag: "Attachment",
      url: "https://example.com/cat.jpg",
      detail: "low"
    })
    expect(Result.getOrThrow(run(Attachment.fromUrl("data:image/gif;base64,R0lGODdh"))).mediaType).toBe("image/gif")
    expect(Result.getOrThrow(Result.flip(run(Attachment.fromUrl("ftp://example.com/cat.jpg"))))).toMatchObject({
      reason: "InvalidUrl",
      source: "ftp://example.com/cat.jpg"
    })
  })

  it("content parts and a user message that pass request validation", () => {
    const image = Result.getOrThrow(run(Attachment.fromBytes(jpeg, { detail: "high" })))
    const url = Result.getOrThrow(run(Attachment.fromUrl("https://example.com/cat.jpg")))
    expect(Attachment.toContentPart(image)).toEqual({ type: "image_url", image_url: { url: image.url, detail: "high" } })
    const message = Attachment.message("Compare these", image, url)
    expect(message).toEqual({
      role: "user",
      content: [
        { type: "text", text: "Compare these" },
        { type: "image_url", image_url: { url: image.url, detail: "high" } },
        { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } }
      ]
    })
    expect(Result.isSuccess(encoder(Protocol.ChatRequest)({ model: "m", messages: [message] }))).toBe(true)
  })
})
