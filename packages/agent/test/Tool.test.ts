import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import type * as Chat from "@switchboard/core/Chat"
import * as Protocol from "@switchboard/core/Protocol"
import type { SwitchboardError } from "@switchboard/core/SwitchboardError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Agent, type AgentError, Tool, Toolkit } from "../src/index.js"

const Forecast = Tool.make("get_forecast", {
  description: "Weather forecast for a city",
  parameters: Schema.Struct({
    city: Schema.String.annotations({ description: "City name" }),
    days: Schema.Number.annotations({ description: "Days ahead" }),
    note: Schema.optional(Schema.String).annotations({ description: "Free text" }),
    units: Schema.Literal("celsius", "fahrenheit").annotations({ description: "Temperature units" })
  }),
  success: Schema.String
})

describe("Tool", () => {
  it("generates the JSON Schema of spec 2.3 from the parameters", () => {
    expect(Forecast.definition).toEqual({
      type: "function",
      function: {
        name: "get_forecast",
        description: "Weather forecast for a city",
        parameters: {
          type: "object",
          properties: {
            city: { type: "string", description: "City name" },
            days: { type: "number", description: "Days ahead" },
            note: { type: "string", description: "Free text" },
            units: { type: "string", enum: ["celsius", "fahrenheit"], description: "Temperature units" }
          },
          required: ["city", "days", "units"],
          additionalProperties: false
        }
      }
    })
    // And the core's encoder accepts it as a request's tool.
    expect(Schema.is(Protocol.Tool)(Forecast.definition)).toBe(true)
  })

  it("inlines $defs, gives every property a type, and describes unannotated fields by name", () => {
    class Point extends Schema.Class<Point>("Point")({ lat: Schema.Number, lon: Schema.Number }) {}
    const tool = Tool.make("locate", {
      description: "Locate",
      parameters: Schema.Struct({
        at: Point.annotations({ description: "Where" }),
        count: Schema.Int,
        label: Schema.NullOr(Schema.String),
        mixed: Schema.Literal("a", 1)
      }),
      success: Schema.Void
    })
    const parameters = tool.definition.function.parameters
    expect(JSON.stringify(parameters)).not.toContain("$ref")
    expect(parameters).toMatchObject({
      properties: {
        at: {
          type: "object",
          description: "Where",
          properties: { lat: { type: "number" }, lon: { type: "number" } },
          required: ["lat", "lon"]
        },
        count: { type: "integer" },
        label: { type: ["string", "null"], description: "label" },
        mixed: { type: ["string", "number"], enum: ["a", 1], description: "mixed" }
      }
    })
  })

  it("rejects a name the service would reject", () => {
    const make = (name: string) => () =>
      Tool.make(name, { description: "", parameters: Schema.Struct({}), success: Schema.Void })
    expect(make("get weather")).toThrow(/must be 1-64 letters/)
    expect(make("x".repeat(65))).toThrow(/must be 1-64 letters/)
    expect(make("")).toThrow(/must be 1-64 letters/)
    expect(make("get-weather_2")).not.toThrow()
  })

  it("rejects a schema that is not Effect 3's with the Effect version sentence", () => {
    // What an Effect 4 schema looks like to this copy: a value without Effect 3's schema marker.
    const foreign = { "~effect/Schema": "~effect/Schema", fields: {} } as unknown as Schema.Struct<{}>
    expect(() => Tool.make("add", { description: "", parameters: foreign, success: Schema.Void })).toThrow(
      /^Switchboard needs effect 3\.x but found a parameters schema for tool "add" that is not an Effect 3 schema: install a single Effect 3 with `pnpm add effect@\^3`/
    )
  })

  it("rejects two tools of one name in a toolkit", () => {
    expect(() => Toolkit.make(Forecast, Forecast)).toThrow(/two tools are named "get_forecast"/)
  })

  it("types handlers, their requirements and the run from the schemas", () => {
    class Forecasts extends Context.Tag("Forecasts")<Forecasts, { readonly get: (city: string) => Effect.Effect<string> }>() {}
    class Closed extends Schema.TaggedError<Closed>()("Closed", {}) {}
    const Book = Tool.make("book", {
      description: "Books a table",
      parameters: Schema.Struct({ seats: Schema.Number }),
      success: Schema.Struct({ table: Schema.Number }),
      failure: Closed
    })
    const toolkit = Toolkit.make(Forecast, Book)
    const layer = toolkit.toLayer({
      // `days` is a number and `units` a literal union, both from the parameters schema.
      get_forecast: ({ city, days, units }) => Effect.flatMap(Forecasts, (f) => f.get(`${city} ${days} ${units.toUpperCase()}`)),
      book: ({ seats }) => (seats > 8 ? Effect.fail(new Closed()) : Effect.succeed({ table: seats }))
    })
    expectTypeOf(layer).toEqualTypeOf<
      Layer.Layer<Tool.Handler<"get_forecast"> | Tool.Handler<"book">, never, Forecasts>
    >()
    expectTypeOf<Tool.Failure<typeof Book>>().toEqualTypeOf<Closed>()
    expectTypeOf<Tool.Failure<typeof Forecast>>().toEqualTypeOf<never>()
    toolkit.toLayer({
      get_forecast: () => Effect.succeed("ok"),
      // @ts-expect-error a success that does not match the `success` schema
      book: () => Effect.succeed({ table: "7" })
    })
    toolkit.toLayer({
      get_forecast: () => Effect.succeed("ok"),
      // @ts-expect-error a failure the tool does not declare
      book: () => Effect.fail("closed")
    })
    // @ts-expect-error a missing handler
    toolkit.toLayer({ get_forecast: () => Effect.succeed("ok") })

    const run = Agent.run({ model: "m", messages: [], toolkit })
    expectTypeOf(run).toEqualTypeOf<
      Effect.Effect<
        Agent.AgentResult,
        AgentError.AgentError | SwitchboardError,
        Chat.Chat | Tool.Handler<"get_forecast"> | Tool.Handler<"book">
      >
    >()
    expect(toolkit.definitions.map((d) => d.function.name)).toEqual(["get_forecast", "book"])
  })
})
