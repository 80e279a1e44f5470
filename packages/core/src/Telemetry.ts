/**
 * Spans and metrics by the OpenTelemetry semantic conventions for generative
 * AI: the metrics every call records, the provider name, and the opt-in that
 * puts message contents on spans. Export them with any Effect tracer and
 * metric reader, e.g. `@effect/opentelemetry` (`docs/observability.md`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as GenAi from "./internal/genAi.js"
import * as Metrics from "./internal/metrics.js"

/**
 * The value of `gen_ai.provider.name` on every span and metric of the SDK:
 * the service is not one of the conventions' well-known providers.
 *
 * @since 0.1.0
 * @category constants
 */
export const providerName: string = GenAi.providerName

/**
 * A span name by the conventions: `{operation} {target}` (`chat gpt-4o`,
 * `execute_tool get_weather`), or the operation alone without a target.
 *
 * @since 0.1.0
 * @category naming
 */
export const spanName: (operation: string, target: string | undefined) => string = GenAi.spanName

/**
 * Whether message contents (`gen_ai.input.messages`,
 * `gen_ai.output.messages`, tool arguments and results) go on spans. Off by
 * default: prompts and replies often hold what must not leave the process.
 * Turn it on for a scope with `withContentCapture`, for a program with
 * `layerContentCapture`.
 *
 * @since 0.1.0
 * @category content
 */
export const CaptureContent: Context.Reference<boolean> = Context.Reference<boolean>(
  "@switchboard/core/Telemetry/CaptureContent",
  { defaultValue: () => false }
)

/**
 * Records message contents on the spans of the calls inside `effect`.
 *
 * @since 0.1.0
 * @category content
 */
export const withContentCapture = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, CaptureContent, true)

/**
 * Records message contents on spans, for the whole program it is provided to.
 *
 * @since 0.1.0
 * @category content
 */
export const layerContentCapture: Layer.Layer<never> = /* @__PURE__ */ Layer.succeed(CaptureContent, true)

/**
 * A histogram of numbers, as `Metric.histogram` makes.
 *
 * @since 0.1.0
 * @category metrics
 */
export type Histogram = Metric.Histogram<number>

// Made by a function so that an unused histogram is dropped from a bundle:
// a pure call whose arguments read properties is kept.
const histogramOf = (definition: Metrics.Definition): Histogram => Metric.histogram(definition.name, definition)

/**
 * `gen_ai.client.token.usage`: tokens per call, tagged `gen_ai.token.type`
 * `input` or `output`, with the call's operation, provider, request and
 * response model and server. Recorded when the reply says how many.
 * Every value is also tagged `unit` (`{token}`, `s` for the others): that is
 * where `@effect/opentelemetry` reads a metric's unit.
 *
 * @since 0.1.0
 * @category metrics
 */
export const tokenUsage: Histogram = /* @__PURE__ */ histogramOf(Metrics.tokenUsage)

/**
 * `gen_ai.client.operation.duration`: seconds per call, from the request
 * to the reply (to the last chunk for a stream), retries included; tagged
 * like `tokenUsage`, plus `error.type` when the call failed.
 *
 * @since 0.1.0
 * @category metrics
 */
export const operationDuration: Histogram = /* @__PURE__ */ histogramOf(Metrics.operationDuration)

/**
 * `gen_ai.client.operation.time_to_first_chunk`: seconds from the request
 * to the first chunk of a stream; streams only.
 *
 * @since 0.1.0
 * @category metrics
 */
export const timeToFirstChunk: Histogram = /* @__PURE__ */ histogramOf(Metrics.timeToFirstChunk)
