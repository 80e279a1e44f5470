/**
 * The run behind a stream made by `Agent.stream` or `Agent.resumeStream`:
 * the loop with its events sent to a function of the caller's. An encoder
 * that writes every event at once (`UiStream.encodeAgent`) runs the loop
 * itself with it, without the stream's queue and the fiber hop each event
 * takes through it. Kept beside the stream (not on it), so a stream piped
 * on is a new stream and has none.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type { AgentEvent, AgentResult } from "../Agent.js"

/** The loop, its events (`Finished` last) given to `emit` as they come. */
/** Where the loop sends its events. */
export type Emit = (event: AgentEvent<unknown>) => Effect.Effect<void>

export type Run = (emit: Emit) => Effect.Effect<AgentResult<unknown>, unknown, unknown>

const runs = new WeakMap<object, Run>()

/** `stream`, remembered as made by `run`. */
export const remember = <S extends object>(stream: S, run: Run): S => {
  runs.set(stream, run)
  return stream
}

/** The run behind `stream`, when an agent's stream function made it. */
export const runOf = (stream: object): Run | undefined => runs.get(stream)
