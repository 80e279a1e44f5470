import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol, StructuredOutput } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { emulated } from "./fixtures.js"
import { against, apiKey, respondWith } from "./hostile.js"

const model = "gpt-4o-mini"
const request: Protocol.ChatRequest = { model, messages: [{ role: "user", content: "Describe an order" }] }

class Address extends Schema.Class<Address>("Address")({ city: Schema.String, zip: Schema.String }) {}

const Order = Schema.Struct({
  id: Schema.String,
  status: Schema.Literals(["open", "shipped"]),
  address: Address,
  lines: Schema.Array(Schema.Struct({ sku: Schema.String, quantity: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 9 })) }))
})

/** The chat request bodies the emulator received. */
const sentBodies = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) =>
  requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body as Record<string, unknown>))

describe("Chat.createObject over HTTP to the emulator", () => {
  it.effect("forced respond tool (default): a nested value, decoded; the tool is forced in the request", () =>
    Effect.gen(function*() {
      const { completion, value } = yield* Chat.createObject(request, Order)
      expect(value.address).toBeInstanceOf(Address)
      expect(value.lines[0]!.quantity).toBeGreaterThanOrEqual(1)
      expect(completion.usage?.total_tokens).toBeGreaterThan(0)
      const [body] = yield* sentBodies
      expect(body!["tool_choice"]).toEqual({ type: "function", function: { name: "respond" } })
      expect(body!["response_format"]).toBeUndefined()
    }).pipe(Effect.provide(emulated())))

  it.effect("json_schema mode: the same value through response_format", () =>
    Effect.gen(function*() {
      const byTool = yield* Chat.createObject(request, Order)
      const byFormat = yield* Chat.createObject(request, Order, { mode: "json_schema", name: "order" })
      expect(byFormat.value).toEqual(byTool.value)
      const body = (yield* sentBodies)[1]!
      expect(body["tools"]).toBeUndefined()
      expect(body["response_format"]).toMatchObject({ type: "json_schema", json_schema: { name: "order" } })
    }).pipe(Effect.provide(emulated())))

  it.effect("DefaultMode set by a layer picks response_format", () =>
    Effect.gen(function*() {
      yield* Chat.createObject(request, Order).pipe(Effect.provideService(StructuredOutput.DefaultMode, "json_schema"))
      const [body] = yield* sentBodies
      expect(body!["response_format"]).toBeDefined()
    }).pipe(Effect.provide(emulated())))

  it.effect("a schema that is not an object travels wrapped as {value} and comes back unwrapped", () =>
    Effect.gen(function*() {
      const Tags = Schema.NonEmptyArray(Schema.String)
      for (const mode of ["tool", "json_schema"] as const) {
        const { value } = yield* Chat.createObject(request, Tags, { mode })
        expect(value).toEqual(["sample value"])
      }
    }).pipe(Effect.provide(emulated())))

  it.effect("a reply that does not decode is a StructuredOutputError with the text and the issue", () =>
    Effect.gen(function*() {
      const Strict = Schema.Struct({ code: Schema.String.check(Schema.isPattern(/^[A-Z]{3}$/)) })
      const error = yield* Effect.flip(Chat.createObject(request, Strict))
      expect(error._tag).toBe("StructuredOutputError")
      if (error._tag !== "StructuredOutputError") return
      expect(JSON.parse(error.text)).toEqual({ code: "sample code" })
      expect(error.issue).toContain("code")
      expect(error.mode).toBe("tool")
    }).pipe(Effect.provide(emulated())))

  it.effect("a request that already has a tool named respond is refused before sending", () =>
    Effect.gen(function*() {
      const respond: Protocol.Tool = { type: "function", function: { name: "respond", parameters: { type: "object" } } }
      const error = yield* Effect.flip(Chat.createObject({ ...request, tools: [respond] }, Order))
      expect(error).toMatchObject({ _tag: "InvalidRequestError", field: "tools" })
      expect(yield* sentBodies).toEqual([])
    }).pipe(Effect.provide(emulated())))
})

describe("response_format on Chat.create", () => {
  it.effect("json_object: the content parses as JSON", () =>
    Effect.gen(function*() {
      const completion = yield* Chat.create({ ...request, response_format: { type: "json_object" } })
      expect(JSON.parse(completion.choices[0]!.message.content!)).toHaveProperty("reply")
    }).pipe(Effect.provide(emulated())))

  it.effect("a bad response_format fails naming the field, and nothing is sent", () =>
    Effect.gen(function*() {
      const bad = [
        [{ type: "xml" }, "response_format"],
        [{ type: "json_schema", json_schema: { name: "has space", schema: {} } }, "response_format.json_schema.name"],
        [{ type: "json_schema", json_schema: { name: "order" } }, "response_format.json_schema.schema"],
        [{ type: "json_schema", json_schema: { name: "order", schema: {}, strict: "yes" } }, "response_format.json_schema.strict"]
      ] as const
      for (const [format, field] of bad) {
        const error = yield* Effect.flip(
          Chat.create({ ...request, response_format: format as unknown as Protocol.ResponseFormat })
        )
        expect(error).toMatchObject({ _tag: "InvalidRequestError", field })
      }
      expect(yield* sentBodies).toEqual([])
    }).pipe(Effect.provide(emulated())))
})

describe("Chat.createObject against a hostile model", () => {
  const respond = respondWith

  it.live("__proto__ in the value never sets a prototype", () =>
    against(respond(`{"extra":{"__proto__":{"isAdmin":true},"a":1}}`), () =>
      Effect.map(Chat.createObject(request, Schema.Struct({ extra: Schema.Record(Schema.String, Schema.Unknown) })), ({ value }) => {
        expect((value.extra as { isAdmin?: unknown }).isAdmin).toBeUndefined()
        expect(Object.getPrototypeOf(value.extra)).toBe(Object.prototype)
      })))

  it.live("nested 10,000 levels deep, or 5 MB that echo the key: a bounded StructuredOutputError without the key", () =>
    Effect.forEach([`{"a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`, `${apiKey} ${"x".repeat(5 * 1024 * 1024)}`], (args) =>
      against(respond(args), () =>
        Effect.map(Effect.flip(Chat.createObject(request, Schema.Struct({ a: Schema.Unknown }))), (error) => {
          expect(error._tag).toBe("StructuredOutputError")
          expect(error.message.length).toBeLessThan(500)
          expect(error.message).not.toContain(apiKey.slice(0, 10))
        }))))
})
