/**
 * `POST /v1/embeddings`: feature-hashed bags of words and character
 * trigrams, L2-normalised. Equal texts give equal vectors and texts sharing
 * words or spellings score a higher cosine than unrelated ones.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import { fnv1a } from "./hash.js"
import { countWords } from "./text.js"

export const defaultDimensions = 256

const wordsOf = (text: string): ReadonlyArray<string> => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

const trigramsOf = (word: string): ReadonlyArray<string> => {
  const padded = ` ${word} `
  return Array.from({ length: Math.max(0, padded.length - 2) }, (_, i) => padded.slice(i, i + 3))
}

/** The unit vector of a text. */
export const vector = (text: string, dimensions: number): ReadonlyArray<number> => {
  const v = new Array<number>(dimensions).fill(0)
  // A second hash picks the sign so collisions cancel out on average instead of piling up.
  const add = (feature: string, weight: number) => {
    const sign = (fnv1a(feature, 0x9747b28c) & 1) === 0 ? 1 : -1
    v[fnv1a(feature) % dimensions]! += sign * weight
  }
  for (const word of wordsOf(text)) {
    add(`w:${word}`, 1)
    for (const trigram of trigramsOf(word)) add(`t:${trigram}`, 0.5)
  }
  if (v.every((x) => x === 0)) add(`s:${text}`, 1)
  const norm = Math.hypot(...v)
  return v.map((x) => x / norm)
}

/** Little-endian float32s in base64, the `encoding_format: "base64"` wire form. */
const toBase64 = (vector: ReadonlyArray<number>): string => {
  const view = new DataView(new ArrayBuffer(vector.length * 4))
  vector.forEach((x, i) => view.setFloat32(i * 4, x, true))
  return Buffer.from(view.buffer).toString("base64")
}

/** The response body for a decoded request. */
export const response = (request: Protocol.EmbeddingRequest, format: "float" | "base64" = "float") => {
  const inputs = typeof request.input === "string" ? [request.input] : request.input
  const dimensions = request.dimensions ?? defaultDimensions
  const tokens = inputs.reduce((sum, text) => sum + countWords(text), 0)
  return {
    object: "list",
    data: inputs.map((text, index) => ({ object: "embedding", index, embedding: format === "base64" ? toBase64(vector(text, dimensions)) : vector(text, dimensions) })),
    model: request.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens }
  }
}
