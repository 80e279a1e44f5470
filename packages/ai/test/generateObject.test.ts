import { describe, expect, it } from "@effect/vitest"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { SwitchboardLanguageModel } from "../src/index.js"
import { emulated, sentChatBodies } from "./fixtures.js"

class Address extends Schema.Class<Address>("Address")({ city: Schema.String, zip: Schema.String }) {}

const Order = Schema.Struct({
  id: Schema.String,
  status: Schema.Literals(["open", "shipped"]),
  address: Address,
  lines: Schema.Array(Schema.Struct({ sku: Schema.String, quantity: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 9 })) }))
})

const expected = {
  id: "sample id",
  status: "open",
  address: new Address({ city: "sample city", zip: "sample zip" }),
  lines: [{ sku: "sample sku", quantity: 9 }]
}

const provide = (config?: SwitchboardLanguageModel.ConfigService) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(SwitchboardLanguageModel.layer({ model: "gpt-4o-mini", config }).pipe(Layer.provideMerge(emulated()))))

describe("LanguageModel.generateObject over the emulator", () => {
  it.effect("by a forced respond tool (the default): a nested value, decoded", () =>
    Effect.gen(function*() {
      const response = yield* LanguageModel.generateObject({ prompt: "An order, please", schema: Order })
      expect(response.value).toEqual(expected)
      expect(response.value.address).toBeInstanceOf(Address)
      const [body] = yield* sentChatBodies
      expect(body!["tool_choice"]).toEqual({ type: "function", function: { name: "respond" } })
      expect(body!["response_format"]).toBeUndefined()
    }).pipe(provide()))

  it.effect("by response_format json_schema when the config says the service accepts it", () =>
    Effect.gen(function*() {
      const response = yield* LanguageModel.generateObject({ prompt: "An order, please", schema: Order, objectName: "order" })
      expect(response.value).toEqual(expected)
      const [body] = yield* sentChatBodies
      expect(body!["tools"]).toBeUndefined()
      expect(body!["response_format"]).toMatchObject({ type: "json_schema", json_schema: { name: "order" } })
    }).pipe(provide({ structuredOutput: "json_schema" })))

  it.effect("withConfigOverride switches the mode per call", () =>
    Effect.gen(function*() {
      yield* LanguageModel.generateObject({ prompt: "An order", schema: Order }).pipe(
        SwitchboardLanguageModel.withConfigOverride({ structuredOutput: "json_schema" })
      )
      const [body] = yield* sentChatBodies
      expect(body!["response_format"]).toBeDefined()
    }).pipe(provide()))

  it.effect("a schema whose root is not an object (a union) travels wrapped, in both modes", () =>
    Effect.gen(function*() {
      const Shape = Schema.Union([
        Schema.Struct({ kind: Schema.Literal("circle"), radius: Schema.Number }),
        Schema.Struct({ kind: Schema.Literal("square"), side: Schema.Number })
      ])
      const byTool = yield* LanguageModel.generateObject({ prompt: "A shape", schema: Shape })
      const byFormat = yield* LanguageModel.generateObject({ prompt: "A shape", schema: Shape }).pipe(
        SwitchboardLanguageModel.withConfigOverride({ structuredOutput: "json_schema" })
      )
      expect(byTool.value).toEqual({ kind: "circle", radius: 42 })
      expect(byFormat.value).toEqual(byTool.value)
      const [toolBody] = yield* sentChatBodies
      const parameters = (toolBody!["tools"] as ReadonlyArray<{ readonly function: { readonly parameters: unknown } }>)[0]!
      expect(parameters.function.parameters).toMatchObject({ type: "object", required: ["value"] })
    }).pipe(provide()))

  it.effect("strict, in both modes: the strict schema is sent and the value still decodes", () =>
    Effect.gen(function*() {
      const byTool = yield* LanguageModel.generateObject({ prompt: "An order, please", schema: Order })
      const byFormat = yield* LanguageModel.generateObject({ prompt: "An order, please", schema: Order }).pipe(
        SwitchboardLanguageModel.withConfigOverride({ structuredOutput: "json_schema" })
      )
      expect(byTool.value).toEqual(expected)
      expect(byFormat.value).toEqual(expected)
      const [toolBody, formatBody] = yield* sentChatBodies
      const [respond] = toolBody!["tools"] as ReadonlyArray<{ readonly function: Record<string, unknown> }>
      expect(respond!.function).toMatchObject({ name: "respond", strict: true, parameters: { additionalProperties: false } })
      expect(formatBody!["response_format"]).toMatchObject({
        type: "json_schema",
        json_schema: { strict: true, schema: { additionalProperties: false } }
      })
    }).pipe(provide({ strict: true })))

  it.effect("a value that does not decode is a retryable StructuredOutputError", () =>
    Effect.gen(function*() {
      const Code = Schema.Struct({ code: Schema.String.check(Schema.isPattern(/^[A-Z]{3}$/)) })
      const error = yield* Effect.flip(LanguageModel.generateObject({ prompt: "A code", schema: Code }))
      expect(error.reason._tag).toBe("StructuredOutputError")
      expect(error.isRetryable).toBe(true)
    }).pipe(provide()))
})
