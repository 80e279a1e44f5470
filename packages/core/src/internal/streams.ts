/**
 * The one stream stage of the SSE parser and the chat decoders. (On Effect 3
 * this module also held channel-level `unwrap`s, faster than Effect's own;
 * Effect 4's `Stream.unwrap` is that construction, so they are gone.)
 */
import type * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"

/** What `batches` runs over one stream: how a read and the end become output. */
export interface Batches<In, Out, E> {
  /** Pushes what `batch` gives onto `out`; returns how the channel ends there (a failure, `Cause.done()`), if it does. */
  readonly onBatch: (batch: Arr.NonEmptyReadonlyArray<In>, out: Array<Out>) => Effect.Effect<never, E | Cause.Done> | undefined
  /** At the input's end: pushes the last output onto `out`, and says how the channel ends. */
  readonly onEnd: (out: Array<Out>) => Effect.Effect<never, E | Cause.Done>
}

/**
 * A channel that turns each read into any number of elements, as one batch
 * (a read that gives none is skipped), and may end early; what a read gave
 * goes out before the end it met, and an upstream failure comes after what
 * was read before it. `make` runs per stream run: state lives in it. The
 * one stage of the SSE parser and the chat decoders: no effect per element.
 */
export const batches = <In, Out, E, InErr>(
  make: () => Batches<In, Out, E>
): Channel.Channel<Arr.NonEmptyReadonlyArray<Out>, E | InErr, void, Arr.NonEmptyReadonlyArray<In>, InErr, unknown> =>
  Channel.fromTransform((upstream: Pull.Pull<Arr.NonEmptyReadonlyArray<In>, InErr, unknown>) =>
    Effect.sync(() => {
      const { onBatch, onEnd } = make()
      let out: Array<Out> = []
      let end: Effect.Effect<never, E | InErr | Cause.Done> | undefined
      const next: Pull.Pull<Arr.NonEmptyReadonlyArray<Out>, E | InErr> = Effect.suspend(() => {
        if (out.length > 0) {
          const batch = out as unknown as Arr.NonEmptyReadonlyArray<Out>
          out = []
          return Effect.succeed(batch)
        }
        if (end !== undefined) return end
        return Pull.matchEffect(upstream, {
          onSuccess: (batch) => {
            end = onBatch(batch, out)
            return next
          },
          onFailure: (cause) => {
            end = Effect.failCause(cause)
            return next
          },
          onDone: () => {
            end = onEnd(out)
            return next
          }
        })
      })
      return next
    })
  )
