/**
 * A consumer's program, as a user would write it against the published
 * packages: chat, a stream, embeddings, a video task and an agent with one
 * tool, against the service at SWITCHBOARD_BASE_URL (the packed emulator).
 * scripts/consumer/run.mjs type-checks it, compiles it and runs it in
 * directories outside the workspace. It prints one JSON line of results.
 */
import { Agent } from "@switchboard/agent"
import { Chat, Embeddings, Videos } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

const Add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ sum: Schema.Finite })
})
const toolkit = Toolkit.make(Add)
const handlers = toolkit.toLayer({ add: ({ a, b }) => Effect.succeed({ sum: a + b }) })

const user = (content: string) => [{ role: "user" as const, content }]

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
  return {
    chat: completion.choices[0]?.message.content ?? "",
    stream: streamed,
    embeddings: vectors.map((vector) => vector.length),
    video: video.videoUrl,
    agent: { text: agent.text, toolCalls: agent.steps.flatMap((step) => step.toolResults.map((result) => `${result.name}:${result.outcome}`)) }
  }
})

const results = await program.pipe(
  Effect.provide(Layer.merge(handlers, NodeSwitchboard.layerConfig())),
  Effect.runPromise
)
process.stdout.write(JSON.stringify(results) + "\n")
