/**
 * Spans and metrics as an OpenTelemetry collector receives them: exported
 * through `@effect/opentelemetry` to in-memory exporters, from calls that
 * cross real HTTP to the emulator (`docs/observability.md`).
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { describe, expect, it } from "@effect/vitest"
import { SpanKind, SpanStatusCode } from "@opentelemetry/api"
import { type DataPoint, DataPointType, type Histogram, MetricReader } from "@opentelemetry/sdk-metrics"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Chat from "@switchboard/core/Chat"
import * as Embeddings from "@switchboard/core/Embeddings"
import * as Images from "@switchboard/core/Images"
import * as Telemetry from "@switchboard/core/Telemetry"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"
import { emulated } from "./fixtures.js"

/** A reader the test collects from when it wants: no timer. */
class CollectingReader extends MetricReader {
  protected override onForceFlush() {
    return Promise.resolve()
  }
  protected override onShutdown() {
    return Promise.resolve()
  }
}

const secret = "sk-observability-secret-0123456789"
const prompt = "my private words about the quarterly numbers"
const model = Emulator.chatMiniModel
const request = {
  model,
  messages: [{ role: "user" as const, content: prompt }],
  max_tokens: 50,
  temperature: 0.2,
  top_p: 0.9,
  seed: 7,
  stop: "END"
}

/** Runs `effect` against the emulator with spans and metrics exported in memory. */
const exported = <A, E>(
  effect: Effect.Effect<A, E, Chat.Chat | Embeddings.Embeddings | Images.Images>,
  reader: MetricReader = new CollectingReader(),
  onExporter: (exporter: InMemorySpanExporter) => void = () => {}
) =>
  Effect.gen(function*() {
    const spans = new InMemorySpanExporter()
    onExporter(spans)
    const sdk = NodeSdk.layer(() => ({
      resource: { serviceName: "observability-test" },
      spanProcessor: new SimpleSpanProcessor(spans),
      metricReader: reader
    }))
    const emulator = yield* Emulator.Emulator
    // Read before the layer ends: shutting the SDK down empties the exporter.
    const [result, finished] = yield* Effect.provide(
      Effect.zip(Effect.result(effect), Effect.sync(() => spans.getFinishedSpans())),
      sdk
    )
    return { result, spans: finished, exporter: spans, reader, port: Number(new URL(emulator.url).port) }
  }).pipe(Effect.provide(emulated({ apiKey: secret }, { apiKey: secret })))

// String-array attributes reach the collector as arrays: `@effect/opentelemetry`
// 4 exports them as they are (0.64, on Effect 3, sent their JSON text).
const named = (spans: ReadonlyArray<ReadableSpan>, name: string): Array<ReadableSpan> =>
  spans.filter((span) => span.name === name)


/** Everything a span carries that a collector stores: name, attributes, events, status. */
const everything = (spans: ReadonlyArray<ReadableSpan>): string =>
  JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events, span.status]))

describe("spans exported through @effect/opentelemetry", () => {
  it.effect("Chat.create: one client span named and annotated by the GenAI conventions", () =>
    Effect.gen(function*() {
      const { port, result, spans } = yield* exported(Chat.create(request))
      expect(result._tag).toBe("Success")
      const completion = result._tag === "Success" ? result.success : undefined
      const [span, ...others] = named(spans, `chat ${model}`)
      expect(others).toEqual([])
      expect(span!.kind).toBe(SpanKind.CLIENT)
      expect(span!.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "switchboard",
        "gen_ai.request.model": model,
        "server.address": "127.0.0.1",
        "server.port": port,
        "gen_ai.request.max_tokens": 50,
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.top_p": 0.9,
        "gen_ai.request.seed": 7,
        "gen_ai.request.stream": false,
        "gen_ai.response.id": completion!.id,
        "gen_ai.response.model": completion!.model,
        "gen_ai.usage.input_tokens": completion!.usage!.prompt_tokens,
        "gen_ai.usage.output_tokens": completion!.usage!.completion_tokens
      })
      expect(span!.attributes["gen_ai.request.stop_sequences"]).toEqual(["END"])
      expect(span!.attributes["gen_ai.response.finish_reasons"]).toEqual([completion!.choices[0]!.finish_reason])
      expect(span!.attributes["error.type"]).toBeUndefined()
    }))

  it.effect("Chat.stream: the span ends after the last chunk, with usage, finish reason and time to first chunk", () =>
    Effect.gen(function*() {
      const openWhileStreaming: Array<boolean> = []
      let exporter: InMemorySpanExporter | undefined
      const ended = () => named(exporter?.getFinishedSpans() ?? [], `chat ${model}`).length > 0
      const { result, spans } = yield* exported(
        Chat.stream(request, { includeUsage: true }).pipe(
          Stream.tap(() => Effect.sync(() => openWhileStreaming.push(!ended()))),
          Stream.runCollect
        ),
        undefined,
        (created) => (exporter = created)
      )
      expect(result._tag).toBe("Success")
      const chunks = result._tag === "Success" ? (result.success) : []
      expect(chunks.length).toBeGreaterThan(1)
      // While chunks were still arriving, the call's span had not ended.
      expect(openWhileStreaming).toEqual(chunks.map(() => true))
      const [span, ...others] = named(spans, `chat ${model}`)
      expect(others).toEqual([])
      const usage = [...chunks].reverse().find((chunk) => chunk.usage)?.usage
      expect(usage).toBeDefined()
      expect(span!.kind).toBe(SpanKind.CLIENT)
      expect(span!.attributes).toMatchObject({
        "gen_ai.request.stream": true,
        "gen_ai.response.id": chunks[0]!.id,
        "gen_ai.usage.input_tokens": usage!.prompt_tokens,
        "gen_ai.usage.output_tokens": usage!.completion_tokens
      })
      expect(span!.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"])
      expect(span!.attributes["gen_ai.response.time_to_first_chunk"]).toEqual(expect.any(Number))
    }))

  it.effect("a failed call: error.type is the error's tag and the span's status an error", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* exported(Chat.create({ ...request, model: "no-such-model" }))
      expect(result._tag).toBe("Failure")
      const [span] = named(spans, "chat no-such-model")
      expect(span!.attributes["error.type"]).toBe("NotFoundError")
      expect(span!.status.code).toBe(SpanStatusCode.ERROR)
    }))

  it.effect("embeddings and images: their operation, model and output type", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* exported(Effect.all([
        Embeddings.create({ model: Emulator.embeddingModel, input: ["a", "b"], dimensions: 8 }),
        Images.generate({ prompt: "a lighthouse" })
      ]))
      expect(result._tag).toBe("Success")
      const [embeddings] = named(spans, `embeddings ${Emulator.embeddingModel}`)
      expect(embeddings!.kind).toBe(SpanKind.CLIENT)
      expect(embeddings!.attributes).toMatchObject({
        "gen_ai.operation.name": "embeddings",
        "gen_ai.embeddings.dimension.count": 8
      })
      expect(embeddings!.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0)
      const [image] = named(spans, `chat ${Emulator.imageModel}`)
      expect(image!.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.output.type": "image" })
    }))

  it.effect("neither the key nor, by default, the messages are in any span", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* exported(Effect.all([
        Chat.create(request),
        Stream.runDrain(Chat.stream(request)),
        Chat.create({ ...request, model: "no-such-model" }).pipe(Effect.ignore)
      ]))
      expect(result._tag).toBe("Success")
      const text = everything(spans)
      expect(text).toContain(`chat ${model}`)
      expect(text).not.toContain(secret)
      expect(text).not.toContain(prompt)
      expect(text).not.toContain("gen_ai.input.messages")
    }))

  it.effect("with content capture, the messages go on the span, the key still does not", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* exported(Telemetry.withContentCapture(Effect.all([
        Chat.create({ ...request, messages: [{ role: "user", content: `${prompt} ${secret}` }] }),
        Stream.runCollect(Chat.streamText(request))
      ])))
      expect(result._tag).toBe("Success")
      const [created, streamed] = named(spans, `chat ${model}`)
      const input = JSON.parse(String(created!.attributes["gen_ai.input.messages"]))
      expect(input).toEqual([{ role: "user", parts: [{ type: "text", content: `${prompt} [redacted]` }] }])
      const reply = result._tag === "Success" ? result.success[0].choices[0]!.message.content : undefined
      expect(JSON.parse(String(created!.attributes["gen_ai.output.messages"]))).toEqual([
        // The emulator echoes the prompt: the key in it is redacted too.
        { role: "assistant", parts: [{ type: "text", content: reply?.replaceAll(secret, "[redacted]") }], finish_reason: "stop" }
      ])
      const text = result._tag === "Success" ? result.success[1].join("") : ""
      expect(JSON.parse(String(streamed!.attributes["gen_ai.output.messages"]))).toEqual([
        { role: "assistant", parts: [{ type: "text", content: text }], finish_reason: "stop" }
      ])
      expect(everything(spans)).not.toContain(secret)
    }))

})

type Point = DataPoint<Histogram>

/** The data points of a histogram the reader collects now. */
const histogram = (reader: MetricReader, name: string) =>
  Effect.map(Effect.promise(() => reader.collect()), ({ resourceMetrics }) => {
    const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name)
    if (metric === undefined) return { unit: undefined, points: [] as Array<Point> }
    expect(metric.dataPointType).toBe(DataPointType.HISTOGRAM)
    return { unit: metric.descriptor.unit, points: metric.dataPoints as Array<Point> }
  })

/**
 * Count and sum of the points whose attributes include `attributes`. Metrics
 * live in one registry per process: tests compare before and after.
 */
const total = (points: ReadonlyArray<Point>, attributes: Record<string, string>) => {
  const matching = points.filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
  return { count: matching.reduce((n, p) => n + p.value.count, 0), sum: matching.reduce((n, p) => n + (p.value.sum ?? 0), 0) }
}

describe("metrics exported through @effect/opentelemetry", () => {
  it.effect("gen_ai.client.token.usage by token type, gen_ai.client.operation.duration per call with error.type", () =>
    Effect.gen(function*() {
      const reader = new CollectingReader()
      const labels = { "gen_ai.request.model": model, "gen_ai.provider.name": "switchboard", "gen_ai.operation.name": "chat" }
      const input = { ...labels, "gen_ai.token.type": "input" }
      const output = { ...labels, "gen_ai.token.type": "output" }
      const failedLabels = { "gen_ai.request.model": "no-such-model", "error.type": "NotFoundError" }
      const counts = Effect.gen(function*() {
        const tokens = yield* histogram(reader, "gen_ai.client.token.usage")
        const durations = yield* histogram(reader, "gen_ai.client.operation.duration")
        return {
          input: total(tokens.points, input),
          output: total(tokens.points, output),
          calls: total(durations.points, labels).count,
          failed: total(durations.points, failedLabels).count,
          units: [tokens.unit, durations.unit]
        }
      })
      const { result } = yield* exported(
        Effect.gen(function*() {
          const before = yield* counts
          const completions = yield* Effect.all([Chat.create(request), Chat.create(request)])
          yield* Effect.ignore(Chat.create({ ...request, model: "no-such-model" }))
          return { before, completions, after: yield* counts }
        }),
        reader
      )
      expect(result._tag).toBe("Success")
      if (result._tag === "Failure") return
      const { after, before, completions } = result.success
      const sum = (f: (c: typeof completions[number]) => number) => completions.reduce((n, c) => n + f(c), 0)
      expect(after.units).toEqual(["{token}", "s"])
      expect(after.input.count - before.input.count).toBe(2)
      expect(after.input.sum - before.input.sum).toBe(sum((c) => c.usage!.prompt_tokens))
      expect(after.output.count - before.output.count).toBe(2)
      expect(after.output.sum - before.output.sum).toBe(sum((c) => c.usage!.completion_tokens))
      expect(after.calls - before.calls).toBe(2)
      expect(after.failed - before.failed).toBe(1)
    }))

  it.effect("labels the caller set in Metric.CurrentMetricAttributes go on the call's values too", () =>
    Effect.gen(function*() {
      const reader = new CollectingReader()
      const tagged = { "gen_ai.operation.name": "chat", "gen_ai.request.model": model, tenant: "t-42" }
      const count = Effect.map(histogram(reader, "gen_ai.client.operation.duration"), ({ points }) => total(points, tagged).count)
      const tokens = Effect.map(
        histogram(reader, "gen_ai.client.token.usage"),
        ({ points }) => total(points, { ...tagged, "gen_ai.token.type": "input" }).count
      )
      const { result } = yield* exported(
        Effect.gen(function*() {
          const before = [yield* count, yield* tokens]
          yield* Effect.provideService(Chat.create(request), Metric.CurrentMetricAttributes, { tenant: "t-42" })
          yield* Chat.create(request)
          return { before, after: [yield* count, yield* tokens] }
        }),
        reader
      )
      expect(result._tag).toBe("Success")
      if (result._tag === "Failure") return
      // Only the tagged call counts under the tag: the untagged one reuses no tagged labels.
      expect(result.success.after[0]! - result.success.before[0]!).toBe(1)
      expect(result.success.after[1]! - result.success.before[1]!).toBe(1)
    }))
})
