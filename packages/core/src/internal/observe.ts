/**
 * The effects that record one call by the GenAI conventions: its span's
 * name and attributes, the reply's attributes, and the `Telemetry` metrics.
 * The attributes themselves come from `genAi.ts`.
 *
 * Every call pays for this, so the recording itself is synchronous: the
 * clock and the fiber's context (where the caller's metric attributes are)
 * are read from the fiber once, and the metrics of a kind of call are made
 * once (`LabelSets`).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as ChatFold from "../ChatFold.js"
import * as Telemetry from "../Telemetry.js"
import * as GenAi from "./genAi.js"
import * as Metrics from "./metrics.js"
import { truncate } from "./text.js"

/** Where a transport's calls go, and the metric labels made for them so far. */
export interface Site {
  readonly server: GenAi.Server
  readonly labels: LabelSets
}

/** The site of the service at `apiUrl`. */
export const site = (apiUrl: string): Site => ({ server: GenAi.serverOf(apiUrl), labels: new LabelSets() })

/** A call, ready to be observed: what its end needs (its span's start attributes are not kept). */
export interface Observation<A> {
  readonly name: string
  readonly call: GenAi.Call<A>
  readonly site: Site
  /** Whether message contents go on the span (`Telemetry.CaptureContent`). */
  readonly capture: boolean
  readonly redact: (text: string) => string
}

/** Whether the fiber's scope opted in to message contents (`Telemetry.CaptureContent`). */
export const capturing = (fiber: Fiber.Fiber<unknown, unknown>): boolean => fiber.getRef(Telemetry.CaptureContent)

/**
 * The observation of `call`, and its span's options: the start attributes
 * (message contents too when `capture`) are `transport`, the transport's
 * HTTP attributes in a record made for this call, completed with the call's
 * own. Only the span keeps them: a call in flight holds no copy.
 */
export const start = <A>(
  call: GenAi.Call<A>,
  site: Site,
  redact: (text: string) => string,
  transport: GenAi.Attributes,
  capture: boolean
): { readonly observation: Observation<A>; readonly spanOptions: SpanOptions } => {
  // Object.assign, not spread: no faster on Node 22, but a stream holding
  // spread attributes took twice the memory (the bench's open-streams figure,
  // 199 against 99 KB a stream; docs/decisions.md, "Measured speed-ups").
  const attributes = Object.assign(transport, GenAi.startAttributes(call.operation, call.model, site.server), call.request)
  if (capture && call.input !== undefined) Object.assign(attributes, redacted(call.input(), redact))
  return {
    observation: { name: GenAi.spanName(call.operation, call.model), call, site, capture, redact },
    spanOptions: { kind: "client", captureStackTrace: false, attributes }
  }
}

/** Most characters of a reply's id or model on a span or a metric. */
const maxReplyText = 1000

/**
 * A reply's attribute (id, model, finish reasons): the service's words, so
 * redacted (a key it echoes) and bounded (a 1 MiB id, 10,000 choices' finish
 * reasons: as many as `ChatFold.maxOpened`, as a stream's span keeps).
 */
const replyValue = (value: unknown, redact: (text: string) => string): unknown =>
  typeof value === "string" ?
    truncate(redact(value), maxReplyText) :
    Array.isArray(value) ?
    (value.length > ChatFold.maxOpened ? value.slice(0, ChatFold.maxOpened) : value).map((item: unknown) =>
      typeof item === "string" ? truncate(redact(item), maxReplyText) : item
    ) :
    value

/** Contents are the user's text: a key pasted into a prompt is still redacted. */
const redacted = (attributes: GenAi.Attributes, redact: (text: string) => string): GenAi.Attributes => {
  const out: GenAi.Attributes = {}
  for (const [key, value] of Object.entries(attributes)) out[key] = typeof value === "string" ? redact(value) : value
  return out
}

/**
 * One of the SDK's histograms with `attributes` as its own: the series
 * `Metric.withAttributes` would address (same name, options and attributes),
 * without the new context per update and, for the token histogram shared by
 * input and output, the series key (sorted, stringified attributes) remade
 * at every update (docs/decisions.md).
 */
const tagged = (definition: Metrics.Definition, attributes: Record<string, string>): Telemetry.Histogram =>
  Metric.histogram(definition.name, {
    description: definition.description,
    boundaries: definition.boundaries,
    attributes
  })

/**
 * The metrics of one kind of call, tagged with its operation, models and
 * error type (`tagged`); the caller's own attributes
 * (`Metric.CurrentMetricAttributes`) join them from the fiber's context.
 */
class LabelSet {
  readonly duration: Telemetry.Histogram
  readonly firstChunk: Telemetry.Histogram
  readonly input: Telemetry.Histogram
  readonly output: Telemetry.Histogram

  constructor(
    readonly operation: string,
    readonly model: string | undefined,
    readonly responseModel: string | undefined,
    readonly errorType: string | undefined,
    server: GenAi.Server
  ) {
    const base: Record<string, string> = {
      "gen_ai.operation.name": operation,
      "gen_ai.provider.name": GenAi.providerName,
      "server.address": server.address,
      "server.port": String(server.port)
    }
    if (model !== undefined) base["gen_ai.request.model"] = model
    if (responseModel !== undefined) base["gen_ai.response.model"] = responseModel
    if (errorType !== undefined) base["error.type"] = errorType
    const seconds = { ...base, unit: "s" }
    const tokens = { ...base, unit: "{token}" }
    this.duration = tagged(Metrics.operationDuration, seconds)
    this.firstChunk = tagged(Metrics.timeToFirstChunk, seconds)
    this.input = tagged(Metrics.tokenUsage, { ...tokens, "gen_ai.token.type": "input" })
    this.output = tagged(Metrics.tokenUsage, { ...tokens, "gen_ai.token.type": "output" })
  }

  is(operation: string, model: string | undefined, responseModel: string | undefined, errorType: string | undefined) {
    return this.operation === operation && this.model === model && this.responseModel === responseModel &&
      this.errorType === errorType
  }
}

// The tagged metrics are made once per kind of call, which are few, rather
// than once per call.
class LabelSets {
  private last: LabelSet | undefined
  private readonly byKey = new Map<string, LabelSet>()
  private static readonly max = 1000
  /**
   * The response models named so far. The service names them, and each name
   * is a series the metric registry keeps for ever: past `maxResponseModels`
   * a new one is counted as `_OTHER`.
   */
  private readonly responseModels = new Set<string>()

  responseModel(model: string | undefined): string | undefined {
    if (model === undefined || this.responseModels.has(model)) return model
    if (this.responseModels.size >= maxResponseModels) return "_OTHER"
    this.responseModels.add(model)
    return model
  }

  of(call: GenAi.Start, server: GenAi.Server, responseModel: string | undefined, errorType: string | undefined): LabelSet {
    // Calls come in runs of one kind: the last set is most often the one.
    if (this.last?.is(call.operation, call.model, responseModel, errorType)) return this.last
    const key = `${call.operation}\u0001${call.model}\u0001${responseModel}\u0001${errorType}`
    let set = this.byKey.get(key)
    if (set === undefined) {
      if (this.byKey.size >= LabelSets.max) this.byKey.clear()
      set = new LabelSet(call.operation, call.model, responseModel, errorType, server)
      this.byKey.set(key, set)
    }
    this.last = set
    return set
  }
}

/** Most response models (`gen_ai.response.model`) the metrics of one service tell apart. */
export const maxResponseModels = 64

/** `error.type` of a failed call: the error's tag, `_OTHER` for a defect, none for an interruption. */
const errorTypeOf = (exit: Exit.Exit<unknown, unknown>): string | undefined => {
  if (exit._tag === "Success" || Cause.hasInterruptsOnly(exit.cause)) return undefined
  return Option.match(Cause.findErrorOption(exit.cause), { onNone: () => "_OTHER", onSome: GenAi.errorType })
}

/** One value, with the attributes a caller set in `context` (`Metric.CurrentMetricAttributes`) too. */
const update = (metric: Telemetry.Histogram, value: number, context: Context.Context<never>) =>
  metric.updateUnsafe(value, context)

/** How a call ended, as `end` records it. */
interface Ending {
  readonly exit: Exit.Exit<unknown, unknown>
  readonly reply: GenAi.Reply | undefined
  readonly output?: GenAi.Attributes | undefined
  readonly firstMillis?: number | undefined
}

/**
 * Annotates `span` with what the call's end says (the reply's attributes, or
 * `error.type`) and records its duration and tokens, with the caller's
 * metric attributes in `context`.
 */
const end = <A>(
  observation: Observation<A>,
  span: Tracer.Span,
  millis: number,
  ending: Ending,
  context: Context.Context<never>
) => {
  const { output, firstMillis, reply } = ending
  let model: string | undefined
  if (reply !== undefined) {
    for (const key in reply.attributes) {
      const value = replyValue(reply.attributes[key], observation.redact)
      if (key === "gen_ai.response.model" && typeof value === "string") model = value
      span.attribute(key, value)
    }
  }
  if (observation.capture && output !== undefined) {
    const contents = redacted(output, observation.redact)
    for (const key in contents) span.attribute(key, contents[key])
  }
  const errorType = errorTypeOf(ending.exit)
  if (errorType !== undefined) span.attribute("error.type", errorType)
  const labels = observation.site.labels.of(
    observation.call,
    observation.site.server,
    observation.site.labels.responseModel(model),
    errorType
  )
  update(labels.duration, millis / 1000, context)
  if (reply?.usage?.input !== undefined) update(labels.input, reply.usage.input, context)
  if (reply?.usage?.output !== undefined) update(labels.output, reply.usage.output, context)
  if (firstMillis !== undefined) update(labels.firstChunk, firstMillis / 1000, context)
}

const clockOf = (fiber: Fiber.Fiber<unknown, unknown>) => fiber.getRef(Clock.Clock)

/** `end`, as an effect: the call started at `startMillis` of the fiber's clock. */
export const finish = <A>(
  observation: Observation<A>,
  span: Tracer.Span,
  startMillis: number,
  ending: Ending
): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const millis = clockOf(fiber).currentTimeMillisUnsafe() - startMillis
    end(observation, span, millis, ending, fiber.context)
    return Effect.void
  })

/**
 * The options of a call's span: kind `client`, its start attributes, and no
 * stack trace (one per call costs more than the rest of the span).
 */
export interface SpanOptions {
  readonly kind: "client"
  readonly captureStackTrace: false
  readonly attributes: GenAi.Attributes
}

/**
 * Runs one call under its span, which it ends annotated, and records the
 * call's metrics. `fiber` is the one the call runs on (its clock, and at the
 * end the caller's metric attributes): the caller read it already.
 */
export const observeCall = <A, E, R>(
  observation: Observation<A>,
  spanOptions: SpanOptions,
  fiber: Fiber.Fiber<unknown, unknown>,
  call: (span: Tracer.Span) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.useSpan(observation.name, spanOptions, (span) => {
    const clock = clockOf(fiber)
    const startMillis = clock.currentTimeMillisUnsafe()
    // The span is the only service added, not `withParentSpan`'s stack frame too: each addition
    // refreshes the fiber's cache on entry and exit, and a call's typed error says what failed
    // (docs/decisions.md, "A call's span is its only added service").
    return Effect.onExit(Effect.provideService(call(span), Tracer.ParentSpan, span), (exit) => {
      const genAi = observation.call
      const value = exit._tag === "Success" ? exit.value : undefined
      const reply = value === undefined || genAi.reply === undefined ? undefined : genAi.reply(value)
      const output = !observation.capture || value === undefined || genAi.output === undefined
        ? undefined
        : genAi.output(value)
      const millis = clock.currentTimeMillisUnsafe() - startMillis
      end(observation, span, millis, { exit, reply, output }, fiber.context)
      return Effect.void
    })
  })

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
  const watched = Stream.mapArray(elements, (chunk) => {
    const since = facts.firstMillis() === undefined ? now() - startMillis : 0
    for (const element of chunk) facts.add(element, since)
    return chunk
  })
  return Stream.onExit(watched, (exit) =>
    finish(observation, span, startMillis, {
      exit,
      reply: facts.reply(),
      output: observation.capture ? facts.output() : undefined,
      firstMillis: facts.firstMillis()
    }))
}
