/**
 * Generated media served under `/files/`: deterministic bytes rebuilt from
 * the file name alone, so the server keeps no state for them. They stand for
 * the public result addresses (CDN links) of the real service, which is why
 * they are the one place that needs no key.
 *
 * @internal
 */
import { deflateSync } from "node:zlib"
import { fnv1a } from "./hash.js"

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

const crc32 = (bytes: Uint8Array): number => {
  let c = 0xffffffff
  for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const pngChunk = (type: string, data: Uint8Array): Buffer => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, "ascii")
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

/** A solid-colour RGB PNG of the given size; the colour comes from `seed`. */
export const png = (width: number, height: number, seed: string): Buffer => {
  const colour = fnv1a(seed)
  const row = Buffer.alloc(1 + width * 3)
  for (let x = 0; x < width; x++) row.writeUIntBE(colour & 0xffffff, 1 + x * 3, 3)
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8) // 8-bit RGB, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    pngChunk("IDAT", deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
    pngChunk("IEND", new Uint8Array())
  ])
}

/** Bytes that start like an MP4 (`ftyp` box) followed by deterministic filler: enough to test downloads. */
export const mp4 = (seed: string, size = 64 * 1024): Buffer => {
  const bytes = Buffer.alloc(size)
  Buffer.from([0, 0, 0, 0x18, ...Buffer.from("ftypisom"), 0, 0, 2, 0, ...Buffer.from("isomiso2")]).copy(bytes)
  let state = fnv1a(seed)
  for (let i = 24; i < size; i++) {
    state = Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) >>> 0
    bytes[i] = state & 0xff
  }
  return bytes
}

/** Path of a generated image: everything needed to rebuild it is in the name. */
export const imagePath = (hash: string, width: number, height: number) => `/files/img_${hash}_${width}x${height}.png`

export const videoPath = (taskId: string) => `/files/${taskId}.mp4`

/** The bytes and media type for a `/files/` name, or `undefined`. */
export const lookup = (name: string): { readonly body: Uint8Array; readonly contentType: string } | undefined => {
  const image = /^img_([0-9a-z]+)_(\d{1,4})x(\d{1,4})\.png$/.exec(name)
  if (image) return { body: png(Number(image[2]), Number(image[3]), image[1]!), contentType: "image/png" }
  const video = /^(task_[0-9a-z_]+)\.mp4$/.exec(name)
  if (video) return { body: mp4(video[1]!), contentType: "video/mp4" }
  return undefined
}
