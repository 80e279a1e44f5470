/**
 * A tracer that records every span it makes (over the current tracer), for
 * tests that read the spans' names and attributes after a run.
 */
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

/** The current tracer, each span it makes also pushed onto `spans`. */
export const make = (spans: Array<Tracer.Span>): Effect.Effect<Tracer.Tracer> =>
  Effect.map(Effect.tracer, (base) =>
    Tracer.make({
      span(options) {
        const span = base.span(options)
        spans.push(span)
        return span
      },
      context: base.context
    }))
