/**
 * The agent's spans (`invoke_agent`, `Agent.step`, `execute_tool`): each a
 * span of the current tracer, the parent of what runs inside it, ended with
 * its exit, as `Effect.withSpan` makes them. Unlike `withSpan`, the span is
 * the only service added to the context: `withSpan` adds a stack frame for
 * failure traces too, and every service added is one more entry each lookup
 * under it walks, past eight a copy of the context at each addition (the
 * model call and its transport make dozens of lookups and several additions).
 * A step's typed errors carry what failed, and a tool's defect its own trace.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Tracer from "effect/Tracer"

/**
 * Runs `f(span)` in a new span. When `f` gives an `Exit` (work already done,
 * e.g. a no-op tool), nothing runs inside the span: no context is made for it.
 */
export const inSpan = <A, E, R>(
  name: string,
  options: Tracer.SpanOptionsNoTrace,
  f: (span: Tracer.Span) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.useSpan(name, options, (span) => {
    const body = f(span)
    return Exit.isExit(body) ? body : (Effect.provideService(body, Tracer.ParentSpan, span) as Effect.Effect<A, E, R>)
  })
