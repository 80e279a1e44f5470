/**
 * `POST /v1/embeddings`: deterministic vectors whose cosine tracks meaning a
 * little. Each text is a weighted bag of features (the concepts of its words
 * from a small vocabulary, the stemmed words, their character trigrams; common
 * words left out), and each feature a fixed pseudo-random direction over all
 * dimensions, so vectors look dense like real ones. L2-normalised.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import { fnv1a, mulberry32 } from "./hash.js"
import { countWords } from "./text.js"
import * as Vocabulary from "./vocabulary.js"

export const defaultDimensions = 256

const wordsOf = (text: string): ReadonlyArray<string> => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

const trigramsOf = (word: string): ReadonlyArray<string> => {
  const padded = ` ${word} `
  return Array.from({ length: Math.max(0, padded.length - 2) }, (_, i) => padded.slice(i, i + 3))
}

/** Feature → weight: a shared concept weighs most, a shared word less, a shared spelling least. */
const features = (text: string): Map<string, number> => {
  const out = new Map<string, number>()
  const add = (feature: string, weight: number) => out.set(feature, (out.get(feature) ?? 0) + weight)
  const words = wordsOf(text)
  const content = words.filter((w) => !Vocabulary.isStopword(w))
  // A text of common words only ("the") still gets a vector of its own.
  for (const word of content.length > 0 ? content : words) {
    const stem = Vocabulary.stem(word)
    for (const concept of Vocabulary.concepts(word)) add(`c:${concept}`, concept === "animal" ? 0.8 : 2)
    add(`w:${stem}`, 1)
    for (const trigram of trigramsOf(stem)) add(`t:${trigram}`, 0.25)
  }
  if (out.size === 0) add(`s:${text}`, 1)
  return out
}

/** The unit vector of a text. */
export const vector = (text: string, dimensions: number): ReadonlyArray<number> => {
  const v = new Array<number>(dimensions).fill(0)
  for (const [feature, weight] of features(text)) {
    // The feature's direction: the same numbers for the same feature, every time.
    const random = mulberry32(fnv1a(feature))
    for (let i = 0; i < dimensions; i++) v[i]! += weight * (random() * 2 - 1)
  }
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
