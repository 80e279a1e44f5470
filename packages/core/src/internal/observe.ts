/**
 * The effects that record one call by the GenAI conventions: its span's
 * name and attributes, the reply's attributes, and the `Telemetry` metrics.
 * The attributes themselves come from `genAi.ts`.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as Telemetry from "../Telemetry.js"
import * as GenAi from "./genAi.js"

/** A call, ready to be observed: its span's name and start attributes. */
export interface Observation<A> {
  readonly name: string
  readonly attributes: GenAi.Attributes
  readonly call: GenAi.Call<A>
  readonly server: GenAi.Server
  /** Whether message contents go on the span (`Telemetry.CaptureContent`). */
  readonly capture: boolean
  readonly redact: (text: string) => string
}

/**
 * The span name and start attributes of `call` (its message contents too
 * when the user opted in), plus `extra` (HTTP attributes of the transport).
 */
export const start = <A>(
  call: GenAi.Call<A>,
  server: GenAi.Server,
  redact: (text: string) => string,
  extra: GenAi.Attributes
): Effect.Effect<Observation<A>> =>
  Effect.map(Telemetry.CaptureContent, (capture) => {
    // Object.assign, not spread: V8 copies these dotted-key records by spread
    // some 40 × slower (measured), and this runs for every call.
    const attributes = Object.assign({}, extra, GenAi.startAttributes(call.operation, call.model, server), call.request)
    if (capture && call.input !== undefined) Object.assign(attributes, redacted(call.input(), redact))
    return { name: GenAi.spanName(call.operation, call.model), attributes, call, server, capture, redact }
  })

/** Contents are the user's text: a key pasted into a prompt is still redacted. */
const redacted = (attributes: GenAi.Attributes, redact: (text: string) => string): GenAi.Attributes => {
  const out: GenAi.Attributes = {}
  for (const [key, value] of Object.entries(attributes)) out[key] = typeof value === "string" ? redact(value) : value
  return out
}

/** The low-cardinality attributes of a call: what its metric values are tagged with. */
interface Tags {
  readonly observation: { readonly call: GenAi.Start; readonly server: GenAi.Server }
  readonly responseModel: unknown
  readonly errorType: string | undefined
}

// A metric's hook is cached by the identity of its label array; a new array
// per call would cost a registry lookup (hashing every label) per value, some
// 10 µs. So the arrays are made once per combination, which are few.
const labelCache = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
const maxCachedLabels = 1000

/** The labels of one value: the call's tags, the metric's unit, and the token type if any. */
const labelsOf = (tags: Tags, unit: string, tokenType?: string): ReadonlyArray<MetricLabel.MetricLabel> => {
  const { call, server } = tags.observation
  const responseModel = typeof tags.responseModel === "string" ? tags.responseModel : undefined
  const key = `${call.operation}\u0001${call.model}\u0001${responseModel}\u0001${tags.errorType}\u0001${unit}\u0001${tokenType}\u0001${server.address}\u0001${server.port}`
  const cached = labelCache.get(key)
  if (cached !== undefined) return cached
  const labels = [
    MetricLabel.make("gen_ai.operation.name", call.operation),
    MetricLabel.make("gen_ai.provider.name", GenAi.providerName),
    MetricLabel.make("server.address", server.address),
    MetricLabel.make("server.port", String(server.port)),
    MetricLabel.make("unit", unit)
  ]
  if (call.model !== undefined) labels.push(MetricLabel.make("gen_ai.request.model", call.model))
  if (responseModel !== undefined) labels.push(MetricLabel.make("gen_ai.response.model", responseModel))
  if (tags.errorType !== undefined) labels.push(MetricLabel.make("error.type", tags.errorType))
  if (tokenType !== undefined) labels.push(MetricLabel.make("gen_ai.token.type", tokenType))
  if (labelCache.size >= maxCachedLabels) labelCache.clear()
  labelCache.set(key, labels)
  return labels
}

/** One metric value and its labels. */
type Value = readonly [Telemetry.Histogram, ReadonlyArray<MetricLabel.MetricLabel>, number]

/** Records the values, with the labels a caller set with `Effect.tagMetrics` too. */
const record = (values: ReadonlyArray<Value>) =>
  FiberRef.getWith(FiberRef.currentMetricLabels, (scoped) =>
    Effect.sync(() => {
      for (const [metric, labels, value] of values) metric.unsafeUpdate(value, scoped.length === 0 ? labels : [...scoped, ...labels])
    }))

/** The values of a call that ended: its duration, and its tokens when the reply counted them. */
const callValues = (tags: Tags, seconds: number, usage: GenAi.Usage | undefined): Array<Value> => {
  const values: Array<Value> = [[Telemetry.operationDuration, labelsOf(tags, "s"), seconds]]
  if (usage?.input !== undefined) values.push([Telemetry.tokenUsage, labelsOf(tags, "{token}", "input"), usage.input])
  if (usage?.output !== undefined) values.push([Telemetry.tokenUsage, labelsOf(tags, "{token}", "output"), usage.output])
  return values
}

/** `error.type` of a failed call: the error's tag, `_OTHER` for a defect, none for an interruption. */
const errorTypeOf = (exit: Exit.Exit<unknown, unknown>): string | undefined => {
  if (exit._tag === "Success" || Cause.isInterruptedOnly(exit.cause)) return undefined
  return Option.match(Cause.failureOption(exit.cause), { onNone: () => "_OTHER", onSome: GenAi.errorType })
}

/**
 * Annotates `span` with what the call's end says (the reply's attributes, or
 * `error.type`) and records its duration and tokens.
 */
export const finish = <A>(
  observation: Observation<A>,
  span: Tracer.Span,
  startMillis: number,
  exit: Exit.Exit<unknown, unknown>,
  reply: GenAi.Reply | undefined,
  output?: GenAi.Attributes | undefined,
  firstMillis?: number | undefined
): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const attributes: GenAi.Attributes = Object.assign({}, reply?.attributes)
    if (observation.capture && output !== undefined) Object.assign(attributes, redacted(output, observation.redact))
    const errorType = errorTypeOf(exit)
    if (errorType !== undefined) attributes["error.type"] = errorType
    for (const key in attributes) span.attribute(key, attributes[key])
    const tags: Tags = { observation, responseModel: attributes["gen_ai.response.model"], errorType }
    const values = callValues(tags, (now - startMillis) / 1000, reply?.usage)
    if (firstMillis !== undefined) values.push([Telemetry.timeToFirstChunk, labelsOf(tags, "s"), firstMillis / 1000])
    return record(values)
  })

/** The options of a call's span: kind `client`, its start attributes. */
export const spanOptions = (observation: { readonly attributes: GenAi.Attributes }) => ({
  kind: "client" as const,
  // A stack trace per call costs more than the rest of the span.
  captureStackTrace: false,
  attributes: observation.attributes
})

/** Runs one call under its span, which it ends annotated, and records the call's metrics. */
export const observeCall = <A, E, R>(
  observation: Observation<A>,
  call: (span: Tracer.Span) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.useSpan(observation.name, spanOptions(observation), (span) =>
    Effect.flatMap(Clock.currentTimeMillis, (startMillis) =>
      Effect.onExit(Effect.withParentSpan(call(span), span), (exit) => {
        const call = observation.call
        const value = exit._tag === "Success" ? exit.value : undefined
        const reply = value === undefined || call.reply === undefined ? undefined : call.reply(value)
        const output = !observation.capture || value === undefined || call.output === undefined
          ? undefined
          : call.output(value)
        return finish(observation, span, startMillis, exit, reply, output)
      })))

/**
 * Watches the elements of a stream whose span is `span`, gathering `facts`:
 * when it ends (last element, failure or interruption) the span gets what
 * they say and the metrics their values, time to first element included.
 */
export const observeStream = <A, E, R>(
  observation: Observation<unknown>,
  span: Tracer.Span,
  startMillis: number,
  facts: GenAi.Facts<A>,
  elements: Stream.Stream<A, E, R>,
  now: () => number
): Stream.Stream<A, E, R> => {
  // Synchronous, and the clock read only until the first element: this runs for every chunk.
  const watched = Stream.mapChunks(elements, (chunk) => {
    const since = facts.firstMillis() === undefined ? now() - startMillis : 0
    for (const element of chunk) facts.add(element, since)
    return chunk
  })
  return Stream.ensuringWith(watched, (exit) => {
    const output = observation.capture ? facts.output() : undefined
    return finish(observation, span, startMillis, exit, facts.reply(), output, facts.firstMillis())
  })
}
