/**
 * A tracer that keeps every span a program starts, for tests that check
 * what a run traced (names, attributes, parents) without an exporter.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import * as Tracer from "effect/Tracer"

/**
 * Runs `effect` with a tracer that records every span it starts (over the
 * tracer in place, which still gets them), and returns its result as an
 * `Result` with the spans.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import { recordingSpans } from "@switchboard/emulator/RecordingTracer"
 * import * as Effect from "effect/Effect"
 *
 * const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] }
 * const program = Effect.gen(function*() {
 *   const { spans } = yield* recordingSpans(Chat.create(request))
 *   return spans.map((span) => span.name) // contains "chat gpt-4o-mini"
 * })
 * ```
 * @since 0.1.0
 * @category tracing
 */
export const recordingSpans = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<{ readonly result: Result.Result<A, E>; readonly spans: ReadonlyArray<Tracer.Span> }, never, R> =>
  Effect.flatMap(Effect.tracer, (base) => {
    const spans: Array<Tracer.Span> = []
    const tracer = Tracer.make({
      span: (...args) => {
        const span = base.span(...args)
        spans.push(span)
        return span
      },
      context: base.context
    })
    return Effect.map(Effect.result(Effect.withTracer(effect, tracer)), (result) => ({ result, spans }))
  })
