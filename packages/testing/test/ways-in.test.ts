/**
 * One scripted layer serves every way into the SDK: the agent (run, stream,
 * approvals and resume), effect/ai through @switchboard/ai, and the workflow
 * package's durable runs on sqlite.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent } from "@switchboard/agent"
import { SwitchboardEmbeddingModel, SwitchboardLanguageModel } from "@switchboard/ai"
import { AgentWorkflow, Cluster } from "@switchboard/workflow"
import { Reply, ScriptedModel, TestTime } from "@switchboard/testing"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const model = "gpt-4o-mini"

const GetWeather = Tool.make("get_weather", {
  description: "Current weather in a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite })
})
const SendEmail = Tool.make("send_email", {
  description: "Sends an email",
  parameters: Schema.Struct({ to: Schema.String, body: Schema.String }),
  success: Schema.Struct({ sent: Schema.Boolean }),
  needsApproval: true
})
const toolkit = Toolkit.make(GetWeather, SendEmail)
const handlers = toolkit.toLayer({
  get_weather: ({ city }) => Effect.succeed({ city, celsius: 18 }),
  send_email: () => Effect.succeed({ sent: true })
})

const script = [
  Reply.toolCall("get_weather", { city: "Paris" }),
  Reply.toolCall("send_email", { to: "ana@example.com", body: "18 degrees" }, { id: "call_email" }),
  Reply.text("Sent: 18 degrees in Paris.")
]
const question = [{ role: "user" as const, content: "Weather in Paris, then email Ana" }]

describe("the agent", () => {
  it.effect("run pauses for approval; resume sends the decision and finishes", () =>
    Effect.gen(function*() {
      const options = { model, toolkit }
      const paused = yield* Agent.run({ ...options, messages: question })
      expect(paused.status).toBe("paused")
      expect(paused.pending.map((p) => [p.callId, p.name])).toEqual([["call_email", "send_email"]])
      const approvalId = paused.pending[0]!.approvalId
      const done = yield* Agent.resume({ ...options, transcript: paused.transcript, decisions: { [approvalId]: "approve" } })
      expect(done.status).toBe("completed")
      expect(done.text).toBe("Sent: 18 degrees in Paris.")
      const calls = yield* ScriptedModel.calls
      const last = calls[2]?.chat?.messages.at(-1)
      expect(last).toMatchObject({ role: "tool", tool_call_id: "call_email", content: `{"sent":true}` })
      yield* ScriptedModel.assertComplete
    }).pipe(Effect.provide(handlers), Effect.provide(ScriptedModel.layer(script))))

  it.effect("stream streams each model call (the calls made are streamed ones)", () =>
    TestTime.run(Effect.gen(function*() {
      const events = yield* Stream.runCollect(Agent.stream({ model, toolkit, messages: question }))
      const finished = events.at(-1)
      expect(finished?._tag).toBe("Finished")
      if (finished?._tag === "Finished") expect(finished.result.status).toBe("paused")
      expect((yield* ScriptedModel.calls).map((c) => c.streamed)).toEqual([true, true])
      expect(yield* ScriptedModel.remaining).toBe(1)
    })).pipe(Effect.provide(handlers), Effect.provide(ScriptedModel.layer(script))))

  it.effect("a transient failure mid-run is retried on the test clock, and the run goes on", () =>
    TestTime.run(Effect.gen(function*() {
      const result = yield* Agent.run({ model, toolkit: Toolkit.make(GetWeather), messages: question })
      expect(result.text).toBe("18")
      expect((yield* TestTime.slept).length).toBe(1)
    })).pipe(
      Effect.provide(handlers),
      Effect.provide(ScriptedModel.layer([Reply.toolCall("get_weather", { city: "Paris" }), Reply.error(503), Reply.text("18")]))
    ))
})

describe("effect/ai through @switchboard/ai", () => {
  const Recipe = Schema.Struct({ title: Schema.String, grams: Schema.Finite })
  const models = Layer.mergeAll(
    SwitchboardLanguageModel.layer({ model }),
    SwitchboardEmbeddingModel.layer({ model: "text-embedding-3-small" })
  )

  it.effect("generateText with a toolkit, streamText, generateObject, EmbeddingModel", () =>
    Effect.gen(function*() {
      const withTools = yield* LanguageModel.generateText({ prompt: "Weather in Paris?", toolkit: Toolkit.make(GetWeather) })
      expect(withTools.toolResults.map((r) => r.result)).toEqual([{ city: "Paris", celsius: 18 }])
      const text = yield* LanguageModel.streamText({ prompt: "Tell me" }).pipe(
        Stream.runFold(() => "", (acc, part) => part.type === "text-delta" ? acc + part.delta : acc)
      )
      expect(text).toBe("Once upon a time")
      const recipe = yield* LanguageModel.generateObject({ prompt: "Pancakes", schema: Recipe })
      expect(recipe.value).toEqual({ title: "Pancakes", grams: 250 })
      const vectors = yield* Effect.flatMap(EmbeddingModel.EmbeddingModel, (m) => m.embedMany(["a cat", "a kitten"]))
      expect(vectors.embeddings.length).toBe(2)
      expect((yield* ScriptedModel.calls).map((c) => [c.path, c.streamed])).toEqual([
        ["/chat/completions", false],
        ["/chat/completions", true],
        ["/chat/completions", false],
        ["/embeddings", false]
      ])
      yield* ScriptedModel.assertComplete
    }).pipe(
      Effect.provide(handlers),
      Effect.provide(models.pipe(Layer.provideMerge(ScriptedModel.layer([
        Reply.toolCall("get_weather", { city: "Paris" }),
        Reply.text("Once upon a time"),
        Reply.toolCall("respond", { title: "Pancakes", grams: 250 }),
        Reply.embeddings(4)
      ]))))
    ))
})

describe("the workflow package", () => {
  it.live("a durable agent run on sqlite, its model calls answered by the script", () =>
    Effect.gen(function*() {
      const filename = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-testing-")), "agents.sqlite")
      const agent = AgentWorkflow.make({ name: "ScriptedAgent", toolkit: Toolkit.make(GetWeather) })
      const layer = agent.layer.pipe(
        Layer.provide(handlers),
        Layer.provideMerge(Cluster.layerRunner({ database: { _tag: "Sqlite", filename }, port: 24987 })),
        Layer.provideMerge(ScriptedModel.layer([Reply.toolCall("get_weather", { city: "Paris" }), Reply.text("18 °C in Paris")]))
      )
      yield* Effect.gen(function*() {
        yield* agent.start("weather-1", model, question)
        const result = yield* agent.result("weather-1").pipe(
          Effect.flatMap((r) => (r?._tag === "Complete" ? Effect.succeed(r) : Effect.fail("not complete yet"))),
          Effect.retry(Schedule.spaced("100 millis"))
        )
        expect(result._tag).toBe("Complete")
        yield* ScriptedModel.assertComplete
      }).pipe(Effect.provide(layer))
    }), 60_000)
})
