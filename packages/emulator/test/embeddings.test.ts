import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Emulator from "../src/Emulator.js"
import * as Protocol from "@switchboard/core/Protocol"
import { at, call, decode, errorOf, type Reply } from "./utils.js"

const vectors = (reply: Reply) => decode(Protocol.EmbeddingResponse, reply).data.map((d) => d.embedding)

const run = Effect.provide(Emulator.layer())

const embed = (input: unknown, extra: Record<string, unknown> = {}) =>
  call("/v1/embeddings", { body: { model: "text-embedding-3-small", input, ...extra } })

const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => a.reduce((sum, x, i) => sum + x * b[i]!, 0)

describe("embeddings", () => {
  it.effect("returns deterministic unit vectors in the list format", () =>
    Effect.gen(function*() {
      const reply = yield* embed(["The cat sat on the mat", "The cat sat on the mat"])
      expect(reply.status).toBe(200)
      const body = decode(Protocol.EmbeddingResponse, reply)
      expect(body).toMatchObject({ object: "list", model: "text-embedding-3-small", usage: { prompt_tokens: 12, total_tokens: 12 } })
      expect(body.data.map((d) => [d.object, d.index])).toEqual([["embedding", 0], ["embedding", 1]])
      const [a, b] = vectors(reply)
      expect(a).toHaveLength(256)
      expect(a).toEqual(b)
      expect(cosine(a!, a!)).toBeCloseTo(1, 10)
      expect(vectors(yield* embed("The cat sat on the mat"))[0]).toEqual(a)
    }).pipe(run))

  it.effect("scores similar texts closer than unrelated ones", () =>
    Effect.gen(function*() {
      const reply = yield* embed([
        "The cat sat on the mat",
        "A cat was sitting on a mat",
        "Quarterly revenue grew by eleven percent"
      ])
      const [base, similar, unrelated] = vectors(reply) as [Array<number>, Array<number>, Array<number>]
      expect(cosine(base, similar)).toBeGreaterThan(cosine(base, unrelated))
      expect(cosine(base, similar)).toBeGreaterThan(0.4)
    }).pipe(run))

  it.effect("ranks texts by meaning: related words count, not only shared ones", () =>
    Effect.gen(function*() {
      const query = "a kitten asleep on the couch"
      const documents = [
        "The goldfish sleeps on a red ball.",
        "Quarterly revenue grew by 4%.",
        "The cat is napping on the sofa.",
        "A dog runs in the park."
      ]
      const [q, ...docs] = vectors(yield* embed([query, ...documents]))
      const ranked = documents.map((text, i) => ({ text, score: cosine(q!, docs[i]!) })).sort((a, b) => b.score - a.score)
      expect(ranked[0]!.text).toBe("The cat is napping on the sofa.")
      expect(ranked.at(-1)!.text).toBe("Quarterly revenue grew by 4%.")
      const [profit, revenue, kitten] = vectors(yield* embed(["Profits rose this quarter", "Quarterly revenue grew", "a kitten"]))
      expect(cosine(profit!, revenue!)).toBeGreaterThan(cosine(profit!, kitten!) + 0.3)
    }).pipe(run))

  it.effect("spreads every vector over all its dimensions, like a real embedding", () =>
    Effect.gen(function*() {
      for (const v of vectors(yield* embed(["one text", "x", "the"]))) {
        expect(v.filter((x) => x === 0).length).toBeLessThan(v.length / 20)
        expect(cosine(v, v)).toBeCloseTo(1, 10)
      }
    }).pipe(run))

  it.effect("honours dimensions and rejects empty input", () =>
    Effect.gen(function*() {
      const small = yield* embed("hello", { dimensions: 64 })
      expect(vectors(small)[0]).toHaveLength(64)
      const empty = yield* embed("")
      expect(empty.status).toBe(400)
      expect(errorOf(empty).param).toBe("input")
    }).pipe(run))
})

describe("embeddings as base64", () => {
  it.effect("encodes little-endian float32s when encoding_format is base64", () =>
    Effect.gen(function*() {
      const floats = vectors(yield* embed("hello world"))[0]!
      const encoded = yield* embed("hello world", { encoding_format: "base64" })
      const bytes = Buffer.from(String(at(encoded.json, "data", 0, "embedding")), "base64")
      const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4))
      expect(decoded).toHaveLength(256)
      decoded.forEach((x, i) => expect(x).toBeCloseTo(floats[i]!, 6))
    }).pipe(run))
})

describe("embeddings dimensions", () => {
  it.effect("dimensions past the model's 1536 are a 400 naming the field, as the real service answers", () =>
    Effect.gen(function*() {
      expect(vectors(yield* embed("cat", { dimensions: 1536 }))[0]).toHaveLength(1536)
      for (const dimensions of [1537, 100_000_000]) {
        const reply = yield* embed("cat", { dimensions })
        expect(reply.status).toBe(400)
        expect(errorOf(reply)).toMatchObject({ param: "dimensions", code: "invalid_value" })
      }
    }).pipe(run))
})
