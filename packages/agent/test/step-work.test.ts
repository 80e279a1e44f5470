/**
 * What a step keeps from one call to the next, or skips in the common case
 * (docs/performance.md, "Agent step overhead"): each must behave as if the
 * work were done every time.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Telemetry from "@switchboard/core/Telemetry"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Agent, Tool, Toolkit } from "../src/index.js"
import { emulated, recordingSpans } from "./fixtures.js"
import { model } from "./tools.js"

const user = (content: string): Protocol.Message => ({ role: "user", content })

describe("a tool's schemas, compiled once per tool", () => {
  // Two toolkits with a tool of one name and different schemas: anything
  // cached by name would decode or encode one tool's calls with the other's.
  const ByNumber = Tool.make("measure", {
    description: "Measures a number",
    parameters: Schema.Struct({ n: Schema.Number }),
    success: Schema.Struct({ v: Schema.NumberFromString })
  })
  const ByText = Tool.make("measure", {
    description: "Measures a text",
    parameters: Schema.Struct({ n: Schema.String }),
    success: Schema.Struct({ v: Schema.Number })
  })
  const byNumber = Toolkit.make(ByNumber)
  const byText = Toolkit.make(ByText)
  const numberHandlers = byNumber.toLayer({ measure: ({ n }) => Effect.succeed({ v: n + 1 }) })
  const textHandlers = byText.toLayer({ measure: ({ n }) => Effect.succeed({ v: n.length }) })

  const once = <T extends Toolkit.Tools>(toolkit: Toolkit.Toolkit<T>, args: string) =>
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
  class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}
  const Greet = Tool.make("greet", { description: "Greets", parameters: Schema.Struct({}), success: Schema.String })
  const kit = Toolkit.make(Greet)
  // The greeting from the layer's services; content capture from the caller's context.
  const live = kit.toLayer({
    greet: () => Effect.zipWith(Greeting, Telemetry.CaptureContent, (greeting, capture) => `${greeting}, capture ${capture}`)
  })
  const greet = Effect.map(
    Agent.run({ model, toolkit: kit, stopWhen: Agent.stepCountIs(1), messages: [user("Use greet")] }),
    (result) => result.steps[0]!.toolResults[0]!.content
  )

  it.effect("are the ones its layer was built with, over the caller's of the same tag", () =>
    Effect.gen(function*() {
      const handlers = Layer.provide(live, Layer.succeed(Greeting, "from the layer"))
      const content = yield* greet.pipe(
        Effect.provide(handlers),
        Effect.provideService(Greeting, "from the caller"),
        Telemetry.withContentCapture
      )
      expect(content).toBe("from the layer, capture true")
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
  const Note = Tool.make("note", { description: "Notes", parameters: Schema.Struct({}), success: Schema.String })
  const Crash = Tool.make("crash", { description: "Throws", parameters: Schema.Struct({}), success: Schema.String })
  const kit = Toolkit.make(Note, Crash)
  const noted = FiberRef.unsafeMake("nothing")
  const live = kit.toLayer({
    note: () => Effect.as(FiberRef.set(noted, "noted"), "ok"),
    crash: () => Effect.dieMessage("crashed")
  })

  it.effect("runs its tool under the step's span, as several calls do", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* recordingSpans(
        Agent.run({ model, toolkit: kit, stopWhen: Agent.stepCountIs(1), messages: [user("Use note")] })
      )
      expect(Either.isRight(result)).toBe(true)
      const step = spans.find((s) => s.name === "Agent.step")!
      const tool = spans.find((s) => s.name === "execute_tool note")!
      expect(Option.map(tool.parent, (p) => p.spanId)).toEqual(Option.some(step.spanId))
      expect(tool.status._tag).toBe("Ended")
    }).pipe(Effect.provide(Layer.merge(emulated(), live))))

  it.effect("a defect fails the run with ToolDefect; the tool's fiber refs reach the caller, as a joined fiber's do", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(
        Agent.run({ model, toolkit: kit, stopWhen: Agent.stepCountIs(1), messages: [user("Use note")] }).pipe(
          Effect.zipRight(FiberRef.get(noted))
        )
      )
      expect(yield* Fiber.join(fiber)).toBe("noted")
      const error = yield* Effect.flip(Agent.run({ model, toolkit: kit, messages: [user("Use crash")] }))
      expect(error).toMatchObject({ _tag: "ToolDefect", tool: "crash" })
    }).pipe(Effect.provide(Layer.merge(emulated(), live))))
})
