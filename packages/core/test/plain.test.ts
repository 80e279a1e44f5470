/**
 * The hand-written checks that stand before the schemas on hot paths
 * (`internal/plain.ts`) are held to the schemas: they accept every valid
 * value the schema generates, and never accept a value the schema rejects
 * (valid values with one part replaced by random JSON).
 */
import { describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Schema from "effect/Schema"
import { isNonEmptyStrings, isPlainChatCompletion, isPlainEmbeddingResponse } from "../src/internal/plain.js"
import * as Protocol from "../src/Protocol.js"
import { mutate, viaJson } from "./jsonMutation.js"

const json = Arbitrary.schema(Schema.Json)
const path = Arbitrary.array(Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1000 }))), {
  maxLength: 5
})

describe("isPlainEmbeddingResponse", () => {
  const schemaIs = Schema.is(Protocol.EmbeddingResponse)
  const responses = Arbitrary.schema(Protocol.EmbeddingResponse)

  it.prop(
    "accepts every response the schema generates (as JSON, which has no Infinity)",
    [responses],
    ([r]) => {
      const candidate = viaJson(r)
      return !schemaIs(candidate) || isPlainEmbeddingResponse(candidate)
    },
    { arbitrary: { runs: 2000 } }
  )

  it.prop(
    "never accepts what the schema rejects",
    [responses, path, json],
    ([r, at, replacement]) => {
      const candidate = mutate(viaJson(r), at, replacement)
      return !isPlainEmbeddingResponse(candidate) || schemaIs(candidate)
    },
    { arbitrary: { runs: 5000 } }
  )
})

describe("isPlainChatCompletion", () => {
  const schemaIs = Schema.is(Protocol.ChatCompletion)
  const completions = Arbitrary.schema(Protocol.ChatCompletion)

  it.prop(
    "accepts every completion the schema generates (as JSON, which has no Infinity)",
    [completions],
    ([c]) => {
      const candidate = viaJson(c)
      return !schemaIs(candidate) || isPlainChatCompletion(candidate)
    },
    { arbitrary: { runs: 2000 } }
  )

  it.prop(
    "never accepts what the schema rejects",
    [completions, path, json],
    ([c, at, replacement]) => {
      const candidate = mutate(viaJson(c), at, replacement)
      return !isPlainChatCompletion(candidate) || schemaIs(candidate)
    },
    { arbitrary: { runs: 5000 } }
  )
})

describe("isNonEmptyStrings", () => {
  const schemaIs = Schema.is(Schema.Array(Protocol.NonEmptyString))

  it.prop(
    "agrees with Schema.Array(NonEmptyString) on any array of JSON values and strings",
    [Arbitrary.array(Arbitrary.schema(Schema.Union([Schema.String, Schema.Json])))],
    ([values]) => isNonEmptyStrings(values) === schemaIs(values),
    { arbitrary: { runs: 3000 } }
  )
})
