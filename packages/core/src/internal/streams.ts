/**
 * On Effect 3 these were `Stream.unwrap` and `Stream.unwrapScoped` as
 * channels, faster than Effect's own. Effect 4's `Stream.unwrap` is that very
 * construction (`Channel.unwrap` over `toChannel`, no stage of its own) and
 * runs the effect in the stream's scope, closed with the stream's exit: the
 * helpers are now its aliases, kept for the modules that still import them.
 */
import * as Stream from "effect/Stream"

/** The stream `effect` makes, run when the stream is. */
export const unwrap = Stream.unwrap

/**
 * The stream `effect` makes in a scope that closes, with the stream's exit,
 * when the stream ends: its last element, a failure or an interruption.
 */
export const unwrapScoped = Stream.unwrap
