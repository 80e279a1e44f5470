/**
 * What the agent makes of `effect/ai`'s tools: the definition it sends (the
 * one `@switchboard/ai` sends for `LanguageModel`), strict tools, names, and
 * the types of handlers and runs.
 */
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import type * as Chat from "@switchboard/core/Chat"
import * as Protocol from "@switchboard/core/Protocol"
import type { RequestError } from "@switchboard/core/SwitchboardError"
import { Emulator } from "@switchboard/emulator"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { Agent, type AgentError } from "../src/index.js"
import { emulated } from "./fixtures.js"
import { model } from "./tools.js"

const Forecast = Tool.make("get_forecast", {
  description: "Weather forecast for a city",
  parameters: Schema.Struct({
    city: Schema.String.annotate({ description: "City name" }),
    days: Schema.Int.annotate({ description: "Days ahead" }),
    note: Schema.optional(Schema.String).annotate({ description: "Free text" }),
    units: Schema.Literals(["celsius", "fahrenheit"]).annotate({ description: "Temperature units" })
  }),
  success: Schema.String
})

/** The `tools` of the first chat request the emulator received. */
const sentTools = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) =>
  (requests.find((r) => r.path.endsWith("/chat/completions"))?.body as Protocol.ChatRequest).tools)

const once = <T extends Agent.AnyTools>(toolkit: Toolkit.Toolkit<T>, question: string) =>
  Agent.run({ model, toolkit, stopWhen: Agent.stepCountIs(1), messages: [{ role: "user", content: question }] })

describe("the tools sent", () => {
  it.effect("are effect/ai's definition of each tool: Tool.getJsonSchema, what LanguageModel hands a provider", () =>
    Effect.gen(function*() {
      const kit = Toolkit.make(Forecast)
      yield* once(kit, "Use get_forecast").pipe(Effect.provide(kit.toLayer({ get_forecast: () => Effect.succeed("sunny") })))
      const [sent] = (yield* sentTools) ?? []
      expect(sent).toEqual({
        type: "function",
        function: { name: "get_forecast", description: "Weather forecast for a city", parameters: Tool.getJsonSchema(Forecast) }
      })
      expect(sent?.function.parameters).toMatchObject({
        type: "object",
        properties: { city: { type: "string", description: "City name" }, units: { enum: ["celsius", "fahrenheit"] } },
        required: ["city", "days", "units"]
      })
      // And core's encoder accepts it as a request's tool.
      expect(Schema.is(Protocol.Tool)(sent)).toBe(true)
    }).pipe(Effect.provide(emulated())))

  it.effect("a tool annotated Tool.Strict is sent strict, and an optional field the model sends as null reads as absent", () =>
    Effect.gen(function*() {
      const Strict = Forecast.annotate(Tool.Strict, true)
      const kit = Toolkit.make(Strict)
      const seen = yield* Ref.make<unknown>(undefined)
      const result = yield* once(kit, `Use get_forecast({"city": "Paris", "days": 2, "note": null, "units": "celsius"})`).pipe(
        Effect.provide(kit.toLayer({ get_forecast: (params) => Effect.as(Ref.set(seen, params), "sunny") }))
      )
      expect(result.steps[0]!.toolResults[0]).toMatchObject({ outcome: "success", content: "sunny" })
      expect(yield* Ref.get(seen)).toEqual({ city: "Paris", days: 2, units: "celsius" })
      const [sent] = (yield* sentTools) ?? []
      expect(sent?.function.strict).toBe(true)
      // Every property required, the optional one as a nullable.
      expect(sent?.function.parameters).toMatchObject({ required: ["city", "days", "note", "units"], additionalProperties: false })
    }).pipe(Effect.provide(emulated())))

  it.effect("a name the service would refuse fails the run before any call, naming the tool", () =>
    Effect.gen(function*() {
      const field = (name: string) => {
        const kit = Toolkit.make(Tool.make(name, { description: "" }))
        return Effect.map(
          Effect.flip(once(kit, "Hi").pipe(Effect.provide(kit.toLayer({ [name]: () => Effect.void } as never)))),
          (error) => (error._tag === "ConfigurationError" ? error.field : error._tag)
        )
      }
      expect(yield* field("get weather")).toBe("toolkit.tools.get weather")
      expect(yield* field("x".repeat(65))).toBe(`toolkit.tools.${"x".repeat(65)}`)
      expect(yield* field("")).toBe("toolkit.tools.")
      expect(yield* Effect.flatMap(Emulator.Emulator, (e) => e.requestCount)).toBe(0)
      const fine = Toolkit.make(Tool.make("get-weather_2", { description: "" }))
      const result = yield* once(fine, "Hi").pipe(Effect.provide(fine.toLayer({ "get-weather_2": () => Effect.void })))
      expect(result.status).toBe("completed")
    }).pipe(Effect.provide(emulated())))
})

describe("types", () => {
  it("types handlers, their requirements and the run from the schemas", () => {
    class Forecasts extends Context.Service<Forecasts, { readonly get: (city: string) => Effect.Effect<string> }>()("Forecasts") {}
    class Closed extends Schema.TaggedError<Closed>()("Closed", {}) {}
    const Book = Tool.make("book", {
      description: "Books a table",
      parameters: Schema.Struct({ seats: Schema.Int }),
      success: Schema.Struct({ table: Schema.Int }),
      failure: Closed
    })
    const toolkit = Toolkit.make(Forecast, Book)
    const layer = toolkit.toLayer(Effect.map(Forecasts, (forecasts) =>
      toolkit.of({
        // `days` is a number and `units` a literal union, both from the parameters schema.
        get_forecast: ({ city, days, units }) => forecasts.get(`${city} ${days} ${units.toUpperCase()}`),
        book: ({ seats }) => (seats > 8 ? Effect.fail(new Closed()) : Effect.succeed({ table: seats }))
      })))
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
        Agent.AgentResult<undefined, typeof toolkit.tools>,
        AgentError.AgentError | RequestError,
        Chat.Chat | Tool.Handler<"get_forecast"> | Tool.Handler<"book">
      >
    >()
    // A pending call's `params` are typed by its tool, told apart by `name`.
    type Pending = Agent.PendingApproval<typeof toolkit.tools>
    expectTypeOf<Extract<Pending, { readonly name: "book" }>["params"]>().toEqualTypeOf<{ readonly seats: number }>()
    expectTypeOf<Pending["name"]>().toEqualTypeOf<"get_forecast" | "book">()
    // And a typed result is still an `AgentResult` for code that does not care which tools.
    expectTypeOf<Agent.AgentResult<undefined, typeof toolkit.tools>>().toExtend<Agent.AgentResult>()
    expectTypeOf<Agent.PendingApproval["params"]>().toEqualTypeOf<unknown>()
  })
})
