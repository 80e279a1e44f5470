/**
 * What a step keeps from one call to the next, or skips in the common case
 * (docs/performance.md, "Agent step overhead"): each must behave as if the
 * work were done every time.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Telemetry from "@switchboard/core/Telemetry"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Agent } from "../src/index.js"
import { emulated, recordingSpans } from "./fixtures.js"
import { model } from "./tools.js"

const user = (content: string): Protocol.Message => ({ role: "user", content })

describe("a tool's schemas and definition, per tool", () => {
  // Two toolkits with a tool of one name and different schemas: anything
  // cached by name (the definition, the handler's key) would decode or
  // encode one tool's calls with the other's.
  const ByNumber = Tool.make("measure", {
    description: "Measures a number",
    parameters: Schema.Struct({ n: Schema.Finite }),
    success: Schema.Struct({ v: Schema.NumberFromString })
  })
  const ByText = Tool.make("measure", {
    description: "Measures a text",
    parameters: Schema.Struct({ n: Schema.String }),
    success: Schema.Struct({ v: Schema.Finite })
  })
  const byNumber = Toolkit.make(ByNumber)
  const byText = Toolkit.make(ByText)
  const numberHandlers = byNumber.toLayer({ measure: ({ n }) => Effect.succeed({ v: n + 1 }) })
  const textHandlers = byText.toLayer({ measure: ({ n }) => Effect.succeed({ v: n.length }) })

  const once = <T extends Agent.AnyTools>(toolkit: Toolkit.Toolkit<T>, args: string) =>
    Effect.map(
      Agent.run({ model, toolkit, stopWhen: Agent.stepCountIs(1), messages: [user(`Use measure(${args})`)] }),
      (result) => result.steps[0]!.toolResults[0]!
    )

  it.effect("runs after runs with another toolkit decode and encode with their own tool", () =>
    Effect.gen(function*() {
      const first = yield* once(byNumber, `{"n": 1}`).pipe(Effect.provide(numberHandlers))
      expect(first).toMatchObject({ outcome: "success", content: `{"v":"2"}` })
      const text = yield* once(byText, `{"n": "abc"}`).pipe(Effect.provide(textHandlers))
      expect(text).toMatchObject({ outcome: "success", content: `{"v":3}` })
      const wrong = yield* once(byText, `{"n": 1}`).pipe(Effect.provide(textHandlers))
      expect(wrong.outcome).toBe("invalid-arguments")
      expect(wrong.content).toContain("n: Expected string")
      const again = yield* once(byNumber, `{"n": 41}`).pipe(Effect.provide(numberHandlers))
      expect(again).toMatchObject({ outcome: "success", content: `{"v":"42"}` })
    }).pipe(Effect.provide(emulated())))
})

describe("a handler's services, provided at each call", () => {
  class Greeting extends Context.Service<Greeting, string>()("test/Greeting") {}
  // A request-level dependency (`effect/ai`'s way for a handler to use a
  // service of the caller): the run requires it.
  const Greet = Tool.make("greet", { description: "Greets", success: Schema.String, dependencies: [Greeting] })
  const kit = Toolkit.make(Greet)
  // The greeting and content capture from the services the handler runs with.
  const live = kit.toLayer({
    greet: () => Effect.zipWith(Greeting, Telemetry.CaptureContent, (greeting, capture) => `${greeting}, capture ${capture}`)
  })
  const greet = Effect.map(
    Agent.run({ model, toolkit: kit, stopWhen: Agent.stepCountIs(1), messages: [user("Use greet")] }),
    (result) => result.steps[0]!.toolResults[0]!.content
  )

  it.effect("are the caller's over its layer's of the same key, as with effect/ai's toolkit", () =>
    Effect.gen(function*() {
      const handlers = Layer.provide(live, Layer.succeed(Greeting, "from the layer"))
      const content = yield* greet.pipe(
        Effect.provide(handlers),
        Effect.provideService(Greeting, "from the caller"),
        Telemetry.withContentCapture
      )
      expect(content).toBe("from the caller, capture true")
    }).pipe(Effect.provide(emulated())))

  it.effect("the caller's context reaches the handler when the layer was built in it", () =>
    Effect.gen(function*() {
      const content = yield* greet.pipe(Effect.provide(live), Effect.provideService(Greeting, "hello"))
      expect(content).toBe("hello, capture false")
      const captured = yield* greet.pipe(Effect.provide(live), Effect.provideService(Greeting, "hi"), Telemetry.withContentCapture)
      expect(captured).toBe("hi, capture true")
    }).pipe(Effect.provide(emulated())))
})

describe("a step with a single call", () => {
  class Fibers extends Context.Service<Fibers, Ref.Ref<ReadonlyArray<number>>>()("test/Fibers") {}
  const Note = Tool.make("note", {
    description: "Notes",
    parameters: Schema.Struct({ label: Schema.String.annotate({ description: "A label" }) }),
    success: Schema.String
  })
  const Crash = Tool.make("crash", { description: "Throws", success: Schema.String })
  const kit = Toolkit.make(Note, Crash)
  // `note` records the fiber it runs in.
  const live = kit.toLayer(Effect.map(Fibers, (fibers) =>
    kit.of({
      note: () => Effect.as(Effect.flatMap(Effect.fiberId, (id) => Ref.update(fibers, (all) => [...all, id])), "ok"),
      crash: () => Effect.die(new Error("crashed"))
    }))).pipe(Layer.provideMerge(Layer.effect(Fibers, Ref.make<ReadonlyArray<number>>([]))))

  it.effect("runs its tool under the step's span, as several calls do", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* recordingSpans(
        Agent.run({ model, toolkit: kit, stopWhen: Agent.stepCountIs(1), messages: [user("Use note")] })
      )
      expect(Result.isSuccess(result)).toBe(true)
      const step = spans.find((s) => s.name === "Agent.step")!
      const tool = spans.find((s) => s.name === "execute_tool note")!
      expect(Option.map(tool.parent, (p) => p.spanId)).toEqual(Option.some(step.spanId))
      expect(tool.status._tag).toBe("Ended")
    }).pipe(Effect.provide(Layer.merge(emulated(), live))))

  it.effect("runs its tool in the run's own fiber, several calls each in a fiber; a defect fails the run with ToolDefect", () =>
    Effect.gen(function*() {
      const caller = yield* Effect.fiberId
      yield* Agent.run({ model, toolkit: kit, stopWhen: Agent.stepCountIs(1), messages: [user("Use note")] })
      expect(yield* Ref.get(yield* Fibers)).toEqual([caller])
      yield* Agent.run({ model, toolkit: kit, stopWhen: Agent.stepCountIs(1), messages: [user(`Use note({"label": "a"}) and note({"label": "b"})`)] })
      const [, first, second] = yield* Ref.get(yield* Fibers)
      expect([first === caller, second === caller, first === second]).toEqual([false, false, false])
      const error = yield* Effect.flip(Agent.run({ model, toolkit: kit, messages: [user("Use crash")] }))
      expect(error).toMatchObject({ _tag: "ToolDefect", tool: "crash" })
    }).pipe(Effect.provide(Layer.merge(emulated(), live))))
})

describe("a call answered at once (a handler's Effect.succeed or Effect.fail, schemas without effects)", () => {
  // Such a call is decoded, run and encoded without a step of the fiber
  // (internal/tools.ts): it must keep its span, its annotations and its errors.
  const Quick = Tool.make("quick", {
    description: "Answers at once",
    parameters: Schema.Struct({ n: Schema.Finite }),
    success: Schema.Struct({ ok: Schema.Boolean }),
    failure: Schema.Struct({ why: Schema.String })
  })
  const Throws = Tool.make("throws", { description: "Throws", success: Schema.String })
  const Nested = Tool.make("nested", { description: "Has a span of its own", success: Schema.String })
  const kit = Toolkit.make(Quick, Throws, Nested)
  const live = kit.toLayer({
    quick: ({ n }) => (n < 0 ? Effect.fail({ why: "negative" }) : Effect.succeed({ ok: true })),
    throws: () => {
      throw new Error("thrown, not an effect")
    },
    nested: () => Effect.succeed("ok").pipe(Effect.withSpan("inner"))
  })
  const run = (content: string) => Agent.run({ model, toolkit: kit, stopWhen: Agent.stepCountIs(1), messages: [user(content)] })

  it.effect("keeps its execute_tool span under the step, ended, with its outcome and, opted in, its contents", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* recordingSpans(run(`Use quick({"n": 1}) and quick({"n": -1})`).pipe(Telemetry.withContentCapture))
      expect(Result.isSuccess(result)).toBe(true)
      const step = spans.find((s) => s.name === "Agent.step")!
      const tools = spans.filter((s) => s.name === "execute_tool quick")
      expect(tools).toHaveLength(2)
      for (const tool of tools) {
        expect(Option.map(tool.parent, (p) => p.spanId)).toEqual(Option.some(step.spanId))
        expect(tool.status._tag).toBe("Ended")
      }
      const byArguments = (n: number) => tools.find((s) => JSON.parse(String(s.attributes.get("gen_ai.tool.call.arguments"))).n === n)!
      expect(byArguments(1).attributes.get("error.type")).toBeUndefined()
      expect(byArguments(1).attributes.get("gen_ai.tool.call.result")).toBe(`{"ok":true}`)
      expect(byArguments(-1).attributes.get("error.type")).toBe("failure")
      expect(byArguments(-1).attributes.get("gen_ai.tool.call.result")).toBe(`{"error":{"why":"negative"}}`)
    }).pipe(Effect.provide(Layer.merge(emulated(), live))))

  it.effect("in call order in the transcript, a failure as the model's to read", () =>
    Effect.gen(function*() {
      const result = yield* run(`Use quick({"n": -1}) and quick({"n": 2})`)
      const tools = result.transcript.filter((m) => m.role === "tool")
      expect(tools.map((m) => m.content)).toEqual([`{"error":{"why":"negative"}}`, `{"ok":true}`])
      expect(result.steps[0]!.toolResults.map((r) => r.outcome)).toEqual(["failure", "success"])
    }).pipe(Effect.provide(Layer.merge(emulated(), live))))

  it.effect("a handler that throws instead of giving an effect fails the run with ToolDefect, as a defect does", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(run("Use throws"))
      expect(error).toMatchObject({ _tag: "ToolDefect", tool: "throws" })
      expect(error._tag === "ToolDefect" && error.defect).toContain("thrown, not an effect")
    }).pipe(Effect.provide(Layer.merge(emulated(), live))))

  it.effect("a handler's own spans are children of its execute_tool span", () =>
    Effect.gen(function*() {
      const { spans } = yield* recordingSpans(run("Use nested"))
      const tool = spans.find((s) => s.name === "execute_tool nested")!
      const inner = spans.find((s) => s.name === "inner")!
      expect(Option.map(inner.parent, (p) => p.spanId)).toEqual(Option.some(tool.spanId))
    }).pipe(Effect.provide(Layer.merge(emulated(), live))))
})
