/**
 * The effects that record one call by the GenAI conventions: its span's
 * name and attributes, the reply's attributes, and the `Telemetry` metrics.
 * The attributes themselves come from `genAi.ts`.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
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
    const attributes = { ...extra, ...GenAi.startAttributes(call.operation, call.model, server), ...call.request }
    if (capture && call.input !== undefined) Object.assign(attributes, redacted(call.input(), redact))
    return { name: GenAi.spanName(call.operation, call.model), attributes, call, server, capture, redact }
  })

/** Contents are the user's text: a key pasted into a prompt is still redacted. */
const redacted = (attributes: GenAi.Attributes, redact: (text: string) => string): GenAi.Attributes => {
  const out: GenAi.Attributes = {}
  for (const [key, value] of Object.entries(attributes)) out[key] = typeof value === "string" ? redact(value) : value
  return out
}

/** The low-cardinality attributes of a call, as metric labels. */
const labelsOf = (
  observation: { readonly call: { readonly operation: string; readonly model?: string | undefined }; readonly server: GenAi.Server },
  responseModel: unknown,
  errorType: string | undefined
): Array<MetricLabel.MetricLabel> => {
  const { call, server } = observation
  const labels = [
    MetricLabel.make("gen_ai.operation.name", call.operation),
    MetricLabel.make("gen_ai.provider.name", GenAi.providerName),
    MetricLabel.make("server.address", server.address),
    MetricLabel.make("server.port", String(server.port))
  ]
  if (call.model !== undefined) labels.push(MetricLabel.make("gen_ai.request.model", call.model))
  if (typeof responseModel === "string") labels.push(MetricLabel.make("gen_ai.response.model", responseModel))
  if (errorType !== undefined) labels.push(MetricLabel.make("error.type", errorType))
  return labels
}

const tokens = (labels: ReadonlyArray<MetricLabel.MetricLabel>, type: "input" | "output", count: number | undefined) =>
  count === undefined ? Effect.void : Metric.update(
    Metric.taggedWithLabels(Telemetry.tokenUsage, [...labels, MetricLabel.make("gen_ai.token.type", type)]),
    count
  )

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
  output?: GenAi.Attributes | undefined
): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const attributes: GenAi.Attributes = { ...reply?.attributes }
    if (observation.capture && output !== undefined) Object.assign(attributes, redacted(output, observation.redact))
    const errorType = errorTypeOf(exit)
    if (errorType !== undefined) attributes["error.type"] = errorType
    for (const key in attributes) span.attribute(key, attributes[key])
    const labels = labelsOf(observation, attributes["gen_ai.response.model"], errorType)
    return Effect.all([
      Metric.update(Metric.taggedWithLabels(Telemetry.operationDuration, labels), (now - startMillis) / 1000),
      tokens(labels, "input", reply?.usage?.input),
      tokens(labels, "output", reply?.usage?.output)
    ], { discard: true })
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
        const output = value === undefined || call.output === undefined ? undefined : call.output(value)
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
  elements: Stream.Stream<A, E, R>
): Stream.Stream<A, E, R> => {
  const watched = Stream.mapChunksEffect(elements, (chunk) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      for (const element of chunk) facts.add(element, now - startMillis)
      return chunk
    }))
  return Stream.ensuringWith(watched, (exit) => {
    const reply = facts.reply()
    const first = facts.firstMillis()
    const labels = labelsOf(observation, reply.attributes["gen_ai.response.model"], undefined)
    return Effect.zipRight(
      finish(observation, span, startMillis, exit, reply, observation.capture ? facts.output() : undefined),
      first === undefined ? Effect.void : Metric.update(Metric.taggedWithLabels(Telemetry.timeToFirstChunk, labels), first / 1000)
    )
  })
}
