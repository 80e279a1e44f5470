/**
 * The hand-written checks that stand before the schemas on hot paths
 * (`internal/plain.ts`) are held to the schemas: they accept every valid
 * value the schema generates, and never accept a value the schema rejects
 * (valid values with one part replaced by random JSON).
 */
import { describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { isNonEmptyStrings, isPlainEmbeddingResponse } from "../src/internal/plain.js"
import * as Protocol from "../src/Protocol.js"
import { mutate, viaJson } from "./jsonMutation.js"

const json = FastCheck.jsonValue({ maxDepth: 2 })
const path = FastCheck.array(FastCheck.nat(), { maxLength: 5 })

describe("isPlainEmbeddingResponse", () => {
  const schemaIs = Schema.is(Protocol.EmbeddingResponse)
  const responses = Arbitrary.make(Protocol.EmbeddingResponse)

  it("accepts every response the schema generates (as JSON, which has no Infinity)", () => {
    FastCheck.assert(
      FastCheck.property(responses, (r) => {
        const candidate = viaJson(r)
        return !schemaIs(candidate) || isPlainEmbeddingResponse(candidate)
      }),
      { numRuns: 2000 }
    )
  })

  it("never accepts what the schema rejects", () => {
    FastCheck.assert(
      FastCheck.property(responses, path, json, (r, at, replacement) => {
        const candidate = mutate(viaJson(r), at, replacement)
        return !isPlainEmbeddingResponse(candidate) || schemaIs(candidate)
      }),
      { numRuns: 5000 }
    )
  })
})

describe("isNonEmptyStrings", () => {
  const schemaIs = Schema.is(Schema.Array(Protocol.NonEmptyString))

  it("agrees with Schema.Array(NonEmptyString) on any array of JSON values and strings", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(FastCheck.oneof(FastCheck.string(), json)), (values) =>
        isNonEmptyStrings(values) === schemaIs(values)),
      { numRuns: 3000 }
    )
  })
})
