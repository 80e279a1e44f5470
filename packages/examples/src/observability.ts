import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Chat, Embeddings } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

// In production: a BatchSpanProcessor over an OTLP exporter (see below).
const exporter = new InMemorySpanExporter()
const Observability = NodeSdk.layer(() => ({
  resource: { serviceName: "observability-example" },
  spanProcessor: new SimpleSpanProcessor(exporter)
}))

const program = Effect.gen(function*() {
  const messages = [{ role: "user" as const, content: "Hello!" }]
  yield* Chat.create({ model: "gpt-4o-mini", messages, max_tokens: 100 })
  yield* Stream.runDrain(Chat.stream({ model: "gpt-4o-mini", messages }, { includeUsage: true }))
  yield* Embeddings.create({ model: "text-embedding-3-small", input: "Hello!" })
  // What a collector would receive: names, kinds and the GenAI attributes
  // (but for those that change from run to run).
  for (const span of exporter.getFinishedSpans()) {
    const {
      "gen_ai.response.id": _id,
      "gen_ai.response.time_to_first_chunk": _ttfc,
      "server.port": _port,
      "switchboard.request_id": _requestId,
      ...attributes
    } = span.attributes
    yield* Console.log(span.name, span.kind === 2 ? "(client)" : "", attributes)
  }
})

await program.pipe(
  Effect.provide(Observability),
  Effect.provide(NodeSwitchboard.layerConfig()),
  Effect.runPromise
)
