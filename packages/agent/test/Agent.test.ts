import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { Agent, Transcript } from "../src/index.js"
import { awaitSleepers, emulated, mapCalls, recordingSpans, sentToolChoices, withModel } from "./fixtures.js"
import { type Delays, events, handlers, model, toolkit } from "./tools.js"

const user = (content: string): Protocol.Message => ({ role: "user", content })

const setup = (delays?: Delays) => Effect.provide(Layer.merge(emulated(), handlers(delays)))

const toolMessages = (transcript: Transcript.Transcript) =>
  transcript.flatMap((m) => (m.role === "tool" ? [m] : []))

describe("Agent.run over HTTP to the emulator", () => {
  it.effect("a two-step run with two parallel calls in the first step", () =>
    Effect.gen(function*() {
      const result = yield* Agent.run({ model, toolkit, messages: [user("Use get_weather and get_time for Paris")] })
      expect(result.status).toBe("completed")
      expect(result.steps).toHaveLength(2)
      const [first, second] = result.steps
      expect(first!.message.tool_calls?.map((c) => c.function.name)).toEqual(["get_weather", "get_time"])
      expect(first!.toolResults.map((r) => [r.name, r.outcome])).toEqual([["get_weather", "success"], ["get_time", "success"]])
      expect(first!.requestMessages).toBe(1)
      expect(second!.requestMessages).toBe(4)
      expect(result.transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"])
      expect(result.text).toContain(`get_weather → {"city":"sample city","celsius":21}`)
      expect(result.text).toContain(`get_time → "12:00"`)
      expect(result.usage.total_tokens).toBe(first!.usage!.total_tokens + second!.usage!.total_tokens)
      expect(result.pending).toEqual([])
    }).pipe(setup()))

  it.effect("sends results in call order although the second call finishes first", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(
        Agent.run({ model, toolkit, messages: [user("Use get_weather and get_time")] })
      )
      yield* awaitSleepers(1, 200)
      yield* awaitSleepers(1, 100)
      yield* TestClock.adjust("100 millis")
      yield* awaitSleepers(1, 100)
      yield* TestClock.adjust("100 millis")
      const result = yield* Fiber.join(fiber)
      const ends = (yield* events).filter((e) => e.phase === "end").map((e) => e.tool)
      expect(ends).toEqual(["get_time", "get_weather"])
      const calls = result.steps[0]!.message.tool_calls!
      expect(calls.map((c) => c.function.name)).toEqual(["get_weather", "get_time"])
      expect(toolMessages(result.transcript).map((m) => m.tool_call_id)).toEqual(calls.map((c) => c.id))
    }).pipe(setup({ get_weather: "200 millis", get_time: "100 millis" })))

  const threeSlowCalls = `Use slow({"label": "a"}) and slow({"label": "b"}) and slow({"label": "c"})`

  /** When the three calls ran, on the `TestClock`: from the first start to the last end. */
  const toolWindow = Effect.map(events, (all) => {
    const starts = all.filter((e) => e.phase === "start").map((e) => e.at)
    const ends = all.filter((e) => e.phase === "end").map((e) => e.at)
    return { calls: starts.length, millis: Math.max(...ends) - Math.min(...starts) }
  })

  it.effect("three parallel 100 ms calls take 100 ms with concurrency 3", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Agent.run({ model, toolkit, concurrency: 3, messages: [user(threeSlowCalls)] }))
      yield* awaitSleepers(3, 100)
      yield* TestClock.adjust("100 millis")
      const result = yield* Fiber.join(fiber)
      expect(result.steps[0]!.toolResults.map((r) => r.content)).toEqual(["done a", "done b", "done c"])
      expect(yield* toolWindow).toEqual({ calls: 3, millis: 100 })
      expect(yield* Clock.currentTimeMillis).toBe(100)
    }).pipe(setup()))

  it.effect("and 300 ms with concurrency 1", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Agent.run({ model, toolkit, concurrency: 1, messages: [user(threeSlowCalls)] }))
      for (let i = 0; i < 3; i++) {
        yield* awaitSleepers(1, 100)
        yield* TestClock.adjust("100 millis")
      }
      const result = yield* Fiber.join(fiber)
      expect(result.steps[0]!.toolResults.map((r) => r.content)).toEqual(["done a", "done b", "done c"])
      expect(yield* toolWindow).toEqual({ calls: 3, millis: 300 })
      expect(yield* Clock.currentTimeMillis).toBe(300)
    }).pipe(setup()))

  it.effect("sends invalid arguments back, naming the field, and runs the corrected call", () =>
    Effect.gen(function*() {
      const result = yield* Agent.run({ model, toolkit, messages: [user("Call get_weather with invalid arguments")] })
      expect(result.status).toBe("completed")
      const [invalid, corrected] = result.steps
      expect(invalid!.toolResults[0]!.outcome).toBe("invalid-arguments")
      expect(JSON.parse(invalid!.toolResults[0]!.content)).toEqual({
        error: "invalid arguments for get_weather: city: Missing key"
      })
      expect(corrected!.toolResults[0]!.outcome).toBe("success")
      expect((yield* events).map((e) => e.tool)).toEqual(["get_weather", "get_weather"]) // the handler ran once
      expect(result.steps).toHaveLength(3)
    }).pipe(setup()))

  it.effect("sends an unknown tool name and a typed failure back to the model", () =>
    Effect.gen(function*() {
      // A model that misspells the second call's tool.
      const misspelling = withModel((_, completion) =>
        mapCalls(completion, (calls) =>
          calls.map((c) => (c.function.name === "get_time" ? { ...c, function: { ...c.function, name: "get_tiem" } } : c))))
      const result = yield* Agent.run({
        model,
        toolkit,
        messages: [user(`Use get_weather({"city": "Atlantis"}) and get_time`)]
      }).pipe(misspelling)
      const [failure, unknown] = result.steps[0]!.toolResults
      expect(failure!.outcome).toBe("failure")
      expect(JSON.parse(failure!.content)).toEqual({
        error: { _tag: "WeatherError", city: "Atlantis", reason: "no such city" }
      })
      expect(unknown!.outcome).toBe("unknown-tool")
      expect(JSON.parse(unknown!.content).error).toBe(
        `unknown tool "get_tiem"; the tools are: get_weather, get_time, slow, delete_file`
      )
      expect(result.status).toBe("completed")
      expect(result.text).toContain("WeatherError")
    }).pipe(setup()))

  it.effect("fails with MaxStepsExceeded carrying the transcript, every call answered", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Agent.run({ model, toolkit, maxSteps: 2, messages: [user("Use get_weather then get_time then get_weather")] })
      )
      expect(error._tag).toBe("MaxStepsExceeded")
      if (error._tag !== "MaxStepsExceeded") return
      expect(error.maxSteps).toBe(2)
      expect(error.message).toBe("the model still called tools after 2 steps")
      expect(error.transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"])
      // Resumed with room for more, the run finishes where it stopped.
      const resumed = yield* Agent.resume({ model, toolkit, transcript: error.transcript })
      expect(resumed.status).toBe("completed")
      expect(resumed.steps).toHaveLength(2)
    }).pipe(setup()))

  it.effect("applies a forced toolChoice to the first model call only", () =>
    Effect.gen(function*() {
      // Like real models, this one keeps calling a tool for as long as one is required.
      const stubborn = withModel((request, completion) =>
        request.tool_choice === "required" && !completion.choices[0]?.message.tool_calls
          ? {
            ...completion,
            choices: [{
              index: 0,
              finish_reason: "tool_calls",
              message: {
                role: "assistant",
                content: null,
                tool_calls: [{ id: `call_${request.messages.length}`, type: "function", function: { name: "get_time", arguments: `{"zone":"UTC"}` } }]
              }
            }]
          }
          : completion
      )
      const required = yield* Agent.run({
        model,
        toolkit,
        toolChoice: "required",
        messages: [user("What time is it?")]
      }).pipe(stubborn)
      expect(required.status).toBe("completed")
      expect(required.steps).toHaveLength(2)
      const named = yield* Agent.run({
        model,
        toolkit,
        toolChoice: { type: "function", function: { name: "get_weather" } },
        messages: [user("Is it warm?")]
      })
      expect(named.steps[0]!.toolResults.map((r) => r.name)).toEqual(["get_weather"])
      expect(named.status).toBe("completed")
      expect(yield* sentToolChoices).toEqual([
        "required",
        "auto",
        { type: "function", function: { name: "get_weather" } },
        "auto"
      ])
    }).pipe(setup()))

  // Three calls, the same or differing only in spacing (compared as parsed), and the third's arguments as sent.
  const repeats = [
    ["the same call", `get_time({"zone": "UTC"}) then get_time({"zone": "UTC"}) then get_time({"zone": "UTC"})`, `{"zone": "UTC"}`],
    ["a call differing only in spacing", `get_time({"zone": "UTC"}) then get_time({"zone":"UTC"}) then get_time({ "zone": "UTC" })`, `{ "zone": "UTC" }`]
  ] as const
  for (const [what, calls, third] of repeats) {
    it.effect(`detects ${what} repeated loopLimit times`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Agent.run({ model, toolkit, messages: [user(`Use ${calls}`)] }))
        expect(error._tag).toBe("LoopDetected")
        if (error._tag !== "LoopDetected") return
        expect([error.tool, error.arguments, error.count]).toEqual(["get_time", third, 3])
        expect((yield* events).filter((e) => e.phase === "end")).toHaveLength(2)
      }).pipe(setup()))
  }

  it.effect("tells calls of one tool with other arguments apart", () =>
    Effect.gen(function*() {
      const result = yield* Agent.run({
        model,
        toolkit,
        messages: [user(`Use get_time({"zone": "UTC"}) then get_time({"zone": "CET"}) then get_time({"zone": "EST"})`)]
      })
      expect(result.status).toBe("completed")
      expect(result.steps).toHaveLength(4)
    }).pipe(setup()))

  it.effect("checks the budget before every model call", () =>
    Effect.gen(function*() {
      const tokens = yield* Effect.flip(
        Agent.run({ model, toolkit, budget: { totalTokens: 1 }, messages: [user("Use get_weather then get_time")] })
      )
      expect(tokens).toMatchObject({ _tag: "BudgetExceeded", limit: "totalTokens", max: 1 })
      expect(tokens._tag === "BudgetExceeded" && tokens.transcript.at(-1)?.role).toBe("tool")
      const calls = yield* Effect.flip(
        Agent.run({ model, toolkit, budget: { toolCalls: 1 }, messages: [user("Use get_weather and get_time")] })
      )
      expect(calls).toMatchObject({ _tag: "BudgetExceeded", limit: "toolCalls", max: 1, used: 2 })
      expect((yield* events)).toHaveLength(2) // the first run's get_weather only
    }).pipe(setup()))

  it.effect("measures the duration budget with the Clock, and ends the run when it is reached", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(
        Agent.run({ model, toolkit, budget: { duration: "150 millis" }, messages: [user("Use slow then slow")] })
      )
      yield* awaitSleepers(1, 100)
      yield* TestClock.adjust("100 millis")
      yield* awaitSleepers(1, 100)
      // The second slow call would end at 200 ms: the budget ends the run at 150.
      yield* TestClock.adjust("50 millis")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({ _tag: "BudgetExceeded", limit: "duration", max: 150, used: 150 })
      expect(error._tag === "BudgetExceeded" && error.transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
    }).pipe(setup()))

  it.effect("stops when a stopWhen condition holds", () =>
    Effect.gen(function*() {
      const result = yield* Agent.run({
        model,
        toolkit,
        stopWhen: Agent.hasToolCall("get_weather"),
        messages: [user("Use get_time then get_weather then get_time")]
      })
      expect(result.status).toBe("stopped")
      expect(result.steps.map((s) => s.toolResults.map((r) => r.name))).toEqual([["get_time"], ["get_weather"]])
    }).pipe(setup()))

  it.effect("traces a span per run, per step and per tool call", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* recordingSpans(
        Agent.run({ name: "weather", model, toolkit, messages: [user("Use get_weather and get_time")] })
      )
      expect(Result.isSuccess(result)).toBe(true)
      const named = (name: string) => spans.filter((s) => s.name === name)
      const run = named("invoke_agent weather")
      expect(run).toHaveLength(1)
      expect(Object.fromEntries(run[0]!.attributes)).toMatchObject({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "switchboard",
        "gen_ai.agent.name": "weather",
        "gen_ai.request.model": model
      })
      const steps = named("Agent.step")
      expect(steps.map((s) => s.attributes.get("agent.step"))).toEqual([0, 1])
      const tools = spans.filter((s) => s.name.startsWith("execute_tool "))
      expect(tools.map((s) => s.name)).toEqual(["execute_tool get_weather", "execute_tool get_time"])
      for (const tool of tools) {
        expect(Option.map(tool.parent, (p) => p.spanId)).toEqual(Option.some(steps[0]!.spanId))
        expect(tool.attributes.get("gen_ai.operation.name")).toBe("execute_tool")
        expect(tool.attributes.get("gen_ai.tool.call.id")).toEqual(expect.any(String))
        // Arguments and results are contents: not recorded unless asked for.
        expect(tool.attributes.has("gen_ai.tool.call.arguments")).toBe(false)
        expect(tool.attributes.has("gen_ai.tool.call.result")).toBe(false)
      }
      const chats = named(`chat ${model}`)
      expect(chats).toHaveLength(2)
      for (const chat of chats) expect(chat.attributes.get("gen_ai.usage.output_tokens")).toBeGreaterThan(0)
    }).pipe(setup()))

  it.effect("retries a tool's typed failure with its schedule", () =>
    Effect.gen(function*() {
      class Busy extends Schema.TaggedError<Busy>()("Busy", {}) {}
      const Flaky = Tool.make("flaky", {
        description: "Fails twice",
        success: Schema.Number,
        failure: Busy
      }).annotate(Agent.ToolRetry, Schedule.recurs(2))
      const attempts = yield* Ref.make(0)
      const kit = Toolkit.make(Flaky)
      const live = kit.toLayer({
        flaky: () =>
          Effect.flatMap(Ref.updateAndGet(attempts, (n) => n + 1), (n) => (n < 3 ? Effect.fail(new Busy()) : Effect.succeed(n)))
      })
      const result = yield* Agent.run({ model, toolkit: kit, messages: [user("Use flaky")] }).pipe(Effect.provide(live))
      expect(result.steps[0]!.toolResults[0]).toMatchObject({ outcome: "success", content: "3" })
    }).pipe(Effect.provide(emulated())))

  it.effect("interrupting a run interrupts a hanging tool and runs its finalizer", () =>
    Effect.gen(function*() {
      const Hang = Tool.make("hang", {
        description: "Never returns",
        success: Schema.String
      })
      const started = yield* Deferred.make<void>()
      const finalized = yield* Ref.make(false)
      const hangKit = Toolkit.make(Hang)
      const live = hangKit.toLayer({
        hang: () =>
          Effect.andThen(Deferred.succeed(started, undefined), Effect.never).pipe(
            Effect.ensuring(Ref.set(finalized, true))
          )
      })
      const fiber = yield* Effect.forkChild(
        Agent.run({ model, toolkit: hangKit, messages: [user("Use hang")] }).pipe(Effect.provide(live))
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(yield* Ref.get(finalized)).toBe(true)
    }).pipe(Effect.provide(emulated())))

  it.effect("a timed-out tool goes back to the model; a defect fails the run with the transcript", () =>
    Effect.gen(function*() {
      const Sleepy = Tool.make("sleepy", {
        description: "Too slow",
        success: Schema.String
      }).annotate(Agent.ToolTimeout, "1 second")
      const Broken = Tool.make("broken", { description: "Throws", success: Schema.String })
      const kit = Toolkit.make(Sleepy, Broken)
      const live = kit.toLayer({
        sleepy: () => Effect.as(Effect.sleep("1 minute"), "late"),
        broken: () => Effect.die(new Error("boom"))
      })
      const fiber = yield* Effect.forkChild(
        Agent.run({ model, toolkit: kit, messages: [user("Use sleepy")] }).pipe(Effect.provide(live))
      )
      yield* awaitSleepers(1, 1000)
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      expect(result.steps[0]!.toolResults[0]).toMatchObject({
        outcome: "timeout",
        content: JSON.stringify({ error: "sleepy timed out after 1s" })
      })
      const defect = yield* Effect.flip(
        Agent.run({ model, toolkit: kit, messages: [user("Use broken")] }).pipe(Effect.provide(live))
      )
      expect(defect).toMatchObject({ _tag: "ToolDefect", tool: "broken" })
      expect(defect._tag === "ToolDefect" && defect.defect).toContain("boom")
      expect(defect._tag === "ToolDefect" && defect.transcript.map((m) => m.role)).toEqual(["user", "assistant"])
    }).pipe(Effect.provide(emulated())))
})

describe("approvals", () => {
  const ask = [user(`Use delete_file({"path": "/tmp/a.txt"})`)]

  it.effect("pause before the call runs, and resume runs it once approved", () =>
    Effect.gen(function*() {
      const paused = yield* Agent.run({ model, toolkit, messages: ask })
      expect(paused.status).toBe("paused")
      expect(paused.pending).toEqual([{
        approvalId: yield* Agent.approvalId(paused.message.tool_calls![0]!),
        callId: paused.message.tool_calls![0]!.id,
        name: "delete_file",
        arguments: `{"path": "/tmp/a.txt"}`,
        params: { path: "/tmp/a.txt" }
      }])
      expect(paused.transcript.at(-1)?.role).toBe("assistant")
      expect(yield* events).toEqual([])

      const decisions = { [paused.pending[0]!.approvalId]: "approve" as const }
      const done = yield* Agent.resume({ model, toolkit, transcript: paused.transcript, decisions })
      expect(done.status).toBe("completed")
      expect(done.steps[0]!.toolResults[0]).toMatchObject({ outcome: "success", content: `{"deleted":"/tmp/a.txt"}` })
      expect((yield* events).map((e) => e.tool)).toEqual(["delete_file", "delete_file"])
    }).pipe(setup()))

  it.effect("a denied call gets a tool message saying so and does not run", () =>
    Effect.gen(function*() {
      const paused = yield* Agent.run({ model, toolkit, messages: ask })
      const decisions = { [paused.pending[0]!.approvalId]: "deny" as const }
      const done = yield* Agent.resume({ model, toolkit, transcript: paused.transcript, decisions })
      expect(done.steps[0]!.toolResults[0]).toMatchObject({
        outcome: "denied",
        content: JSON.stringify({ error: "the user denied this call to delete_file; it did not run" })
      })
      expect(yield* events).toEqual([])
      // Without a decision the run stays paused.
      const again = yield* Agent.resume({ model, toolkit, transcript: paused.transcript })
      expect(again.status).toBe("paused")
    }).pipe(setup()))

  it.effect("a needsApproval function decides per call, from the decoded arguments and the conversation", () =>
    Effect.gen(function*() {
      const asked: Array<readonly [string, number]> = []
      const Remove = Tool.make("remove", {
        description: "Removes a file",
        parameters: Schema.Struct({ path: Schema.String.annotate({ description: "File path" }) }),
        success: Schema.String,
        needsApproval: ({ path }, { messages, toolCallId }) =>
          Effect.sync(() => {
            asked.push([toolCallId, messages.length])
            return path.startsWith("/etc")
          })
      })
      const kit = Toolkit.make(Remove)
      const live = kit.toLayer({ remove: ({ path }) => Effect.succeed(`removed ${path}`) })
      const free = yield* Agent.run({ model, toolkit: kit, messages: [user(`Use remove({"path": "/tmp/a"})`)] }).pipe(
        Effect.provide(live)
      )
      expect(free.status).toBe("completed")
      expect(free.steps[0]!.toolResults[0]).toMatchObject({ outcome: "success", content: "removed /tmp/a" })
      const guarded = yield* Agent.run({ model, toolkit: kit, messages: [user(`Use remove({"path": "/etc/passwd"})`)] }).pipe(
        Effect.provide(live)
      )
      expect(guarded.status).toBe("paused")
      expect(guarded.pending).toMatchObject([{
        callId: guarded.message.tool_calls![0]!.id,
        name: "remove",
        arguments: `{"path": "/etc/passwd"}`,
        params: { path: "/etc/passwd" }
      }])
      // Asked once a call, with the conversation up to the reply that made it (user, assistant).
      expect(asked).toEqual([[free.steps[0]!.message.tool_calls![0]!.id, 2], [guarded.pending[0]!.callId, 2]])
    }).pipe(Effect.provide(emulated())))

  it.effect("a transcript survives encode → JSON → decode → resume", () =>
    Effect.gen(function*() {
      const paused = yield* Agent.run({ model, toolkit, messages: ask })
      const json = yield* Transcript.toJson(paused.transcript)
      expect(JSON.parse(json)).toHaveLength(2)
      // …another process…
      const transcript = yield* Transcript.fromJson(json)
      expect(transcript).toEqual(paused.transcript)
      const decisions = { [paused.pending[0]!.approvalId]: "approve" as const }
      const done = yield* Agent.resume({ model, toolkit, transcript, decisions })
      expect(done.status).toBe("completed")
      expect(done.transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
      expect(Result.isFailure(yield* Effect.result(Transcript.fromJson(`[{"role":"tool","content":"x"}]`)))).toBe(true)
    }).pipe(setup()))
})
