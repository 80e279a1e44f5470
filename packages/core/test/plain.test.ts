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

/** The two properties that hold `check` to `schema`, over `runs` generated values and five times as many mutated ones. */
const heldTo = <S extends Schema.Top>(name: string, schema: S, check: (u: unknown) => boolean) =>
  describe(name, () => {
    const schemaIs = Schema.is(schema)
    const values = Arbitrary.schema(schema)

    it.prop(
      "accepts every value the schema generates (as JSON, which has no Infinity)",
      [values],
      ([value]) => {
        const candidate = viaJson(value)
        return !schemaIs(candidate) || check(candidate)
      },
      { arbitrary: { runs: 2000 } }
    )

    it.prop(
      "never accepts what the schema rejects",
      [values, path, json],
      ([value, at, replacement]) => {
        const candidate = mutate(viaJson(value), at, replacement)
        return !check(candidate) || schemaIs(candidate)
      },
      { arbitrary: { runs: 5000 } }
    )
  })

heldTo("isPlainEmbeddingResponse", Protocol.EmbeddingResponse, isPlainEmbeddingResponse)
heldTo("isPlainChatCompletion", Protocol.ChatCompletion, isPlainChatCompletion)

describe("isNonEmptyStrings", () => {
  const schemaIs = Schema.is(Schema.Array(Protocol.NonEmptyString))

  it.prop(
    "agrees with Schema.Array(NonEmptyString) on any array of JSON values and strings",
    [Arbitrary.array(Arbitrary.schema(Schema.Union([Schema.String, Schema.Json])))],
    ([values]) => isNonEmptyStrings(values) === schemaIs(values),
    { arbitrary: { runs: 3000 } }
  )
})
