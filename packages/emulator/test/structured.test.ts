import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Emulator from "../src/Emulator.js"
import { accumulate, chat, errorOf, message } from "./utils.js"

const run = Effect.provide(Emulator.layer())

class Address extends Schema.Class<Address>("Address")({
  city: Schema.String,
  zip: Schema.String.check(Schema.isMinLength(5))
}) {}

/** Nested structs, a class behind `$ref`, arrays of structs, literals, bounded numbers, optionals. */
const Order = Schema.Struct({
  id: Schema.String,
  status: Schema.Literals(["open", "shipped"]),
  // Finite: Effect 4 writes a plain Number as "a number or the strings Infinity, NaN".
  total: Schema.Finite.check(Schema.isGreaterThan(100)),
  address: Address,
  lines: Schema.Array(Schema.Struct({ sku: Schema.String, quantity: Schema.Int.check(Schema.isLessThanOrEqualTo(10)) })),
  tags: Schema.NonEmptyArray(Schema.String),
  note: Schema.optional(Schema.NullOr(Schema.String))
})

const document = Schema.toJsonSchemaDocument(Order)
const jsonSchema: Record<string, unknown> = { ...document.schema, $defs: document.definitions }
const ask = [{ role: "user", content: "Give me an order" }]
const decodeOrder = Schema.decodeUnknownSync(Schema.fromJsonString(Order))

describe("response_format", () => {
  it.effect("json_schema: the content is JSON that decodes against the schema, the same every time", () =>
    Effect.gen(function*() {
      const body = { messages: ask, response_format: { type: "json_schema", json_schema: { name: "order", schema: jsonSchema, strict: true } } }
      const reply = yield* chat(body)
      const content = message(reply).content!
      const order = decodeOrder(content)
      expect(order.address.city).toBe("sample city")
      expect(order.lines).toHaveLength(1)
      expect(message(yield* chat(body)).content).toBe(content)
    }).pipe(run))

  it.effect("json_schema: streamed, the content is the same JSON", () =>
    Effect.gen(function*() {
      const format = { type: "json_schema", json_schema: { name: "order", schema: jsonSchema } }
      const whole = message(yield* chat({ messages: ask, response_format: format })).content
      const streamed = yield* chat({ messages: ask, response_format: format, stream: true })
      expect(accumulate(streamed.text).content).toBe(whole)
    }).pipe(run))

  it.effect("json_object: the reply is a JSON object holding the text reply", () =>
    Effect.gen(function*() {
      const plain = message(yield* chat({ messages: ask })).content
      const json = message(yield* chat({ messages: ask, response_format: { type: "json_object" } })).content!
      expect(JSON.parse(json)).toEqual({ reply: plain })
    }).pipe(run))

  it.effect("json_object with a JSON Schema in the prompt: the content follows the schema", () =>
    Effect.gen(function*() {
      const messages = [
        { role: "system", content: `Answer with a JSON object that follows this JSON Schema:\n${JSON.stringify(jsonSchema, null, 2)}` },
        ...ask
      ]
      const content = message(yield* chat({ messages, response_format: { type: "json_object" } })).content!
      expect(decodeOrder(content).address.city).toBe("sample city")
    }).pipe(run))

  it.effect("json_object: of several schemas in the prompt, the last one is followed (format instructions with an example)", () =>
    Effect.gen(function*() {
      // The format instructions of LangChain's JSON output parser: an example schema, then the real one, no top-level type.
      const { type: _, ...schema } = jsonSchema
      const instructions = [
        "The output should be formatted as a JSON instance that conforms to the JSON schema below.",
        `As an example, for the schema {"properties": {"foo": {"type": "array", "items": {"type": "string"}}}, "required": ["foo"]}`,
        `the object {"foo": ["bar", "baz"]} is a well-formatted instance of the schema.`,
        "Here is the output schema:",
        "```json",
        JSON.stringify(schema),
        "```"
      ].join("\n")
      const messages = [{ role: "user", content: `Give me an order.\n${instructions}` }]
      const content = message(yield* chat({ messages, response_format: { type: "json_object" } })).content!
      expect(decodeOrder(content).status).toBe("open")
    }).pipe(run))

  it.effect("json_object: JSON in the prompt that is not a schema is not taken for one", () =>
    Effect.gen(function*() {
      const messages = [{ role: "user", content: `Summarise {"name": "Ada", "born": 1815} and {oops` }]
      const plain = message(yield* chat({ messages })).content
      const json = message(yield* chat({ messages, response_format: { type: "json_object" } })).content!
      expect(JSON.parse(json)).toEqual({ reply: plain })
    }).pipe(run))

  it.effect("text: the reply is unchanged", () =>
    Effect.gen(function*() {
      const plain = message(yield* chat({ messages: ask })).content
      expect(message(yield* chat({ messages: ask, response_format: { type: "text" } })).content).toBe(plain)
    }).pipe(run))

  it.effect("a malformed response_format is a 400 naming the field", () =>
    Effect.gen(function*() {
      const reply = yield* chat({ messages: ask, response_format: { type: "json_schema", json_schema: { name: "order" } } })
      expect(reply.status).toBe(400)
      expect(errorOf(reply).param).toBe("response_format.json_schema.schema")
    }).pipe(run))
})

describe("a schema asking for more than anything real", () => {
  // Each would otherwise build without bound: 4^16 objects, a billion items, a billion characters.
  const four = Object.fromEntries(["a", "b", "c", "d"].map((k) => [k, { $ref: "#/$defs/t" }]))
  const branching = { type: "object", properties: four, $defs: { t: { type: "object", properties: four } } }
  const huge = { type: "object", properties: { items: { type: "array", minItems: 1e9, items: { type: "number" } }, text: { type: "string", minLength: 1e9 } } }

  it.effect("is answered with a value built within a bound, on each path a schema takes", () =>
    Effect.gen(function*() {
      for (const schema of [branching, huge]) {
        const replies = [
          yield* chat({ messages: ask, response_format: { type: "json_schema", json_schema: { name: "x", schema } } }),
          yield* chat({ messages: [{ role: "user", content: `Answer with JSON following ${JSON.stringify(schema)}` }], response_format: { type: "json_object" } }),
          yield* chat({ messages: ask, tools: [{ type: "function", function: { name: "respond", parameters: schema } }], tool_choice: "required" })
        ]
        for (const reply of replies) {
          expect(reply.status, reply.text.slice(0, 300)).toBe(200)
          expect(reply.text.length).toBeLessThan(16 * 1024 * 1024)
        }
      }
    }).pipe(run))
})

describe("forced tool with nested parameters", () => {
  it.effect("fills nested objects and arrays so the arguments decode against the schema", () =>
    Effect.gen(function*() {
      const tools = [{ type: "function", function: { name: "respond", description: "answer", parameters: jsonSchema } }]
      const reply = yield* chat({ messages: ask, tools, tool_choice: { type: "function", function: { name: "respond" } } })
      const [call] = message(reply).tool_calls!
      expect(call!.function.name).toBe("respond")
      expect(decodeOrder(call!.function.arguments).tags).toEqual(["sample tags"])
    }).pipe(run))

  it.effect("is made even after other tools ran in this turn (structured output at the end of a run)", () =>
    Effect.gen(function*() {
      const weather = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }
      const respond = { type: "function", function: { name: "respond", parameters: jsonSchema } }
      const messages = [
        { role: "user", content: "Use get_weather" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "sunny" },
        { role: "assistant", content: "It is sunny." }
      ]
      const reply = yield* chat({ messages, tools: [weather, respond], tool_choice: { type: "function", function: { name: "respond" } } })
      expect(message(reply).tool_calls?.map((c) => c.function.name)).toEqual(["respond"])
    }).pipe(run))
})
