/**
 * `Json.parse`, which reads every reply and stream chunk: no `__proto__` key
 * survives, however it is spelled, and every other text parses exactly as
 * `JSON.parse` does.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Schema from "effect/Schema"
import * as Json from "../src/internal/json.js"

const hasOwnProto = (u: unknown): boolean => {
  if (typeof u !== "object" || u === null) return false
  if (Object.prototype.hasOwnProperty.call(u, "__proto__")) return true
  return Object.values(u).some(hasOwnProto)
}

describe("Json.parse", () => {
  it("drops __proto__ keys, written plainly or with escapes, at any depth", () => {
    for (
      const text of [
        `{"__proto__":{"polluted":1},"a":1}`,
        `{"a":{"b":[{"\\u005f_proto__":{"polluted":1}}]}}`,
        `{"a":"x","\\u005f\\u005fproto\\u005f\\u005f":{"polluted":1}}`
      ]
    ) {
      const parsed = Json.parse(text)
      expect(hasOwnProto(parsed)).toBe(false)
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    }
  })

  it("keeps text that only mentions the name, and escapes that spell something else", () => {
    expect(Json.parse(`{"note":"__proto__ is a key","s":"caf\\u00e9"}`)).toEqual({ note: "__proto__ is a key", s: "café" })
  })

  const jsonText = Arbitrary.schema(Schema.Json).pipe(
    Arbitrary.map((value) => JSON.stringify(value)),
    Arbitrary.filter((text) => !text.includes("__proto__"))
  )

  it.prop("parses any other JSON exactly as JSON.parse", [jsonText], ([text]) => {
    expect(Json.parse(text)).toEqual(JSON.parse(text))
  })

  it("throws on text that is not JSON, as JSON.parse", () => {
    expect(() => Json.parse(`{"a":`)).toThrow(SyntaxError)
    expect(() => Json.parse(`{"__proto__":`)).toThrow(SyntaxError)
  })
})
