/**
 * `encoder` and `plainDecoder` (`internal/validate.ts`) pass a value the
 * schema's type accepts on as it is. That holds only for schemas whose
 * encoding and decoding of such a value is the value itself: each schema
 * compiled there is held to it here, on values generated from the schema
 * (ChatRequest, whose cross-field rules random values seldom meet, in
 * property-requests.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Images from "../src/Images.js"
import * as Issue from "../src/internal/issue.js"
import { decoder, encoder, jsonProblem, maxRequestDepth, plainDecoder } from "../src/internal/validate.js"
import * as Protocol from "../src/Protocol.js"
import * as Videos from "../src/Videos.js"

const schemas: ReadonlyArray<readonly [string, AnySchema]> = [
  ["ChatCompletion", Protocol.ChatCompletion],
  ["EmbeddingRequest", Protocol.EmbeddingRequest],
  ["EmbeddingResponse", Protocol.EmbeddingResponse],
  ["ModerationRequest", Protocol.ModerationRequest],
  ["ModerationResponse", Protocol.ModerationResponse],
  ["TaskStatusResponse", Protocol.TaskStatusResponse],
  ["Videos.SubmitRequest", Videos.SubmitRequest],
  ["Images.GenerateRequest", Images.GenerateRequest],
  ["Images.TransformRequest", Images.TransformRequest]
]

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of unrelated schemas
type AnySchema = Schema.Codec<any, any>

/**
 * The value with `Object.prototype` on its objects, as a caller's or
 * `JSON.parse`'s objects have it: effect/Arbitrary makes objects without a
 * prototype, which `toStrictEqual` tells apart from a decoder's copies.
 */
const ordinary = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(ordinary)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, ordinary(inner)]))
}

describe("a value the type accepts is its own encoding and decoding", () => {
  for (const [name, schema] of schemas) {
    let accepted = 0
    const decode = Schema.decodeUnknownResult(schema)
    const encode = Schema.encodeUnknownResult(schema)
    const is = Schema.is(schema)
    it.prop(name, [Arbitrary.schema(schema).pipe(Arbitrary.map(ordinary))], ([value]) => {
      if (!is(value)) return
      accepted++
      expect(decode(value)).toStrictEqual(Result.succeed(value))
      expect(encode(value)).toStrictEqual(Result.succeed(value))
    }, { arbitrary: { runs: 300, seed: 7 } })
    it(`${name}: the schema's own values were checked`, () => expect(accepted).toBeGreaterThan(0))
  }

  it("and what the type rejects still goes through the schema", () => {
    // A tool call without `type` decodes to one with the default…
    const completion = {
      id: "c",
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        message: { role: "assistant", content: null, tool_calls: [{ id: "t", function: { name: "f", arguments: "{}" } }] }
      }]
    }
    const decoded = Result.getOrThrow(plainDecoder(Protocol.ChatCompletion)(completion))
    expect(decoded.choices[0]?.message.tool_calls?.[0]?.type).toBe("function")
    // …ModelList, whose transformation breaks the rule, keeps the full decoder…
    expect(decoder(Protocol.ModelList)([{ id: "m" }])).toStrictEqual(Result.succeed({ data: [{ id: "m" }] }))
    expect(decoder(Protocol.ModelList)({ object: null, data: [] })).toStrictEqual(Result.succeed({ data: [] }))
    expect(Result.isFailure(decoder(Protocol.ModelList)({ object: 5, data: [] }))).toBe(true)
    // …a vector with anything but numbers is refused…
    const vector = plainDecoder(Protocol.EmbeddingResponse)({ data: [{ index: 0, embedding: [0.5, "0.25"] }] })
    expect(Result.isFailure(vector) && Issue.describe(vector.failure)).toContain("expected an array of numbers")
    // …and a bad request still names its field.
    const rejected = encoder(Protocol.ChatRequest)({ model: "m", messages: [{ role: "user" }] })
    expect(Result.isFailure(rejected) && rejected.failure.field).toBe("messages[0].content")
  })
})

// `jsonProblem` checks plain values by a bounded recursion and walks only
// the others for the problem's path: the two must draw the same lines.
describe("jsonProblem's quick check", () => {
  const nested = (levels: number): unknown => {
    let value: unknown = 1
    for (let i = 0; i < levels; i++) value = { a: value }
    return value
  }

  it("takes objects nested up to the limit and names the first one past it", () => {
    expect(jsonProblem(nested(maxRequestDepth))).toBeUndefined()
    expect(jsonProblem(nested(maxRequestDepth + 1))?.message).toMatch(/^(a\.){127}a nests deeper than 128 levels$/)
  })

  it("takes an object met twice that does not contain itself", () => {
    const shared = { x: 1 }
    expect(jsonProblem({ a: shared, b: [shared, shared] })).toBeUndefined()
  })

  it("leaves toJSON, BigInt and numbers JSON cannot carry to the walk that names them", () => {
    expect(jsonProblem({ when: new Date(0), deep: [{ toJSON: () => ({ ok: true }) }] })).toBeUndefined()
    expect(jsonProblem({ a: [{ toJSON: () => ({ n: Infinity }) }] })?.field).toBe("a[0].n")
    expect(jsonProblem({ a: [1, 2n] })?.field).toBe("a[1]")
    expect(jsonProblem({ a: { b: Number.NaN } })?.field).toBe("a.b")
    const cycle: Record<string, unknown> = {}
    cycle["self"] = [cycle]
    expect(jsonProblem({ c: cycle })?.message).toBe("c.self[0] is circular: it contains itself")
  })
})
