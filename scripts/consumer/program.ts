/**
 * A consumer's program, as a user would write it against the published
 * packages: chat, a stream, embeddings, a video task and an agent with one
 * tool (core, node, agent), `effect/ai`'s generateText (ai), a chat over the
 * browser layer's fetch wire (browser), and a video task as a durable
 * workflow on a sqlite runner (workflow), against the service at
 * SWITCHBOARD_BASE_URL (the packed emulator).
 * scripts/consumer/run.mjs type-checks it, compiles it and runs it in
 * directories outside the workspace. It prints one JSON line of results.
 */
import { Agent } from "@switchboard/agent"
import { SwitchboardLanguageModel } from "@switchboard/ai"
import * as BrowserSwitchboard from "@switchboard/browser/BrowserSwitchboard"
import { Chat, Embeddings, Videos } from "@switchboard/core"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import { NodeSwitchboard } from "@switchboard/node"
import { Cluster, VideoWorkflow } from "@switchboard/workflow"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { join } from "node:path"

const Add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ sum: Schema.Finite })
})
const toolkit = Toolkit.make(Add)
const handlers = toolkit.toLayer({ add: ({ a, b }) => Effect.succeed({ sum: a + b }) })

const user = (content: string) => [{ role: "user" as const, content }]

// A single runner whose state is in a sqlite file (node:sqlite, nothing to install).
const runner = VideoWorkflow.layer({ schedule: Schedule.spaced("20 millis"), deadline: "1 minute" }).pipe(
  Layer.provideMerge(Cluster.layerRunner({
    database: { _tag: "Sqlite", filename: join(process.cwd(), "tasks.sqlite") }
  })),
  Layer.provide(NodeSwitchboard.layerConfig({ journal: TaskJournal.layerMemory }))
)

const program = Effect.gen(function*() {
  const completion = yield* Chat.create({ model: "gpt-4o-mini", messages: user("Hello!") })
  const streamed = yield* Chat.streamText({ model: "gpt-4o-mini", messages: user("Count to three") }).pipe(
    Stream.runFold(() => "", (text: string, delta: string) => text + delta)
  )
  const vectors = yield* Embeddings.embedMany(["a cat", "a kitten"], { model: "text-embedding-3-small" })
  const video = yield* Videos.generate(
    { model: "video-1", prompt: "A paper boat on a pond" },
    { schedule: Schedule.spaced("20 millis") }
  )
  const agent = yield* Agent.run({ model: "gpt-4o-mini", toolkit, messages: user("What is 2 + 3? Use the add tool.") })
  const ai = yield* LanguageModel.generateText({ prompt: "Hello!" }).pipe(
    Effect.provide(SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" }))
  )
  const browser = yield* Chat.create({ model: "gpt-4o-mini", messages: user("Hello from fetch") }).pipe(
    Effect.provide(BrowserSwitchboard.layerChat({
      baseUrl: process.env.SWITCHBOARD_BASE_URL!,
      apiKey: process.env.SWITCHBOARD_API_KEY!,
      allowApiKeyInBrowser: true
    }))
  )
  const durable = yield* VideoWorkflow.generate({ model: "video-1", prompt: "a fox" }, { key: "consumer-1" }).pipe(
    Effect.provide(runner)
  )
  return {
    chat: completion.choices[0]?.message.content ?? "",
    stream: streamed,
    embeddings: vectors.map((vector) => vector.length),
    video: video.videoUrl,
    ai: ai.text,
    browser: browser.choices[0]?.message.content ?? "",
    workflow: durable.videoUrl,
    agent: { text: agent.text, toolCalls: agent.steps.flatMap((step) => step.toolResults.map((result) => `${result.name}:${result.outcome}`)) }
  }
})

const results = await program.pipe(
  Effect.provide(Layer.merge(handlers, NodeSwitchboard.layerConfig())),
  Effect.runPromise
)
process.stdout.write(JSON.stringify(results) + "\n")
