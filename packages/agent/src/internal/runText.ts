/**
 * An agent run written as UTF-8 text (`UiStream`'s UI message stream,
 * plain SSE, plain text), in one of two ways:
 *
 * - of a stream `Agent.stream` made (`runOf.ts`), the loop runs in a fiber
 *   of the stream's scope and writes each event as it comes; a pull takes
 *   and encodes everything written since the previous one, or waits for the
 *   next write. No queue stands between the run and the text (a queue hop
 *   cost 159 against 61 ns an event; docs/decisions.md, "the frames written
 *   by the run"). Past `maxUnread` characters not taken, the run waits;
 * - of any other stream of events, a chunk of events at a time, in one
 *   stream stage.
 *
 * Both write the same text, and a failure of the run ends it (`end`), so
 * the stream itself never fails.
 *
 * @internal
 */
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pull from "effect/Pull"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { AgentEvent } from "../Agent.js"
import * as RunOf from "./runOf.js"

/**
 * How a run is written: `text` holds what is written and not yet taken (at
 * first the head, `start` say); `event` writes one event, or gives an effect
 * that writes it once done (the paused run kept before its `finish`); `end`
 * writes the end of a run that ended (`undefined`) or failed.
 */
export interface TextWriter<R> {
  text: string
  event(event: AgentEvent<unknown>): Effect.Effect<void, never, R> | undefined
  end(cause: Cause.Cause<unknown> | undefined): void
}

/** The run behind `events` written by `make()`'s writer, by whichever way `events` allows. */
export const written = <A, E, R, R2>(
  events: Stream.Stream<AgentEvent<A>, E, R>,
  make: () => TextWriter<R2>
): Stream.Stream<Uint8Array, never, R | R2> => {
  const run = RunOf.runOf(events)
  return run === undefined ? fromEvents(events, make) : fromRun(run, make)
}

/** Characters written and not yet taken after which the run waits for a pull. */
const maxUnread = 64 * 1024

const fromRun = <R, R2>(run: RunOf.Run, make: () => TextWriter<R2>): Stream.Stream<Uint8Array, never, R | R2> =>
  Stream.fromChannel(Channel.fromTransform((_upstream, scope) =>
    Effect.suspend(() => {
      const writer = make()
      let ended = false
      /** The pull waiting for text. */
      const reader = new Set<() => void>()
      /** The run's fibers waiting past `maxUnread` for a pull (a step's tools emit from fibers of their own). */
      const parked = new Set<() => void>()
      const wrote = (): Effect.Effect<void> => {
        wakeAll(reader)
        return writer.text.length < maxUnread ? Effect.void : waitIn(parked)
      }
      const emit = (event: AgentEvent<unknown>): Effect.Effect<void, never, R2> => {
        const writing = writer.event(event)
        return writing === undefined ? wrote() : Effect.flatMap(writing, wrote)
      }
      const loop = Effect.matchCause(run(emit as RunOf.Emit), {
        onSuccess: () => writer.end(undefined),
        onFailure: (cause) => writer.end(cause)
      })
      const pull: Effect.Effect<NonEmptyReadonlyArray<Uint8Array>, Cause.Done> = Effect.suspend(() => {
        if (writer.text.length > 0) {
          const chunk = take(writer)
          wakeAll(parked)
          return Effect.succeed(chunk)
        }
        if (ended) return Cause.done()
        return Effect.flatMap(waitIn(reader), () => pull)
      })
      const finished = Effect.ensuring(loop, Effect.sync(() => {
        ended = true
        wakeAll(reader)
      }))
      return Effect.as(Effect.forkIn(finished as Effect.Effect<void>, scope, { startImmediately: true }), pull)
    })
  ))

const fromEvents = <A, E, R, R2>(
  events: Stream.Stream<AgentEvent<A>, E, R>,
  make: () => TextWriter<R2>
): Stream.Stream<Uint8Array, never, R | R2> =>
  Stream.fromChannel(Channel.fromTransform((upstream, scope) => {
    // The run's own scope, closed before a failure is written (as `Stream.catchCause` closes it).
    const runScope = Scope.forkUnsafe(scope)
    return Effect.map(Channel.toTransform(Stream.toChannel(events))(upstream, runScope), (pull) => {
      const writer = make()
      let ended = false
      const next: Effect.Effect<NonEmptyReadonlyArray<Uint8Array>, Cause.Done, R2> = Effect.catchCause(
        Effect.flatMap(pull, (chunk) => {
          const writing = writeAll(writer, chunk, 0)
          return writing === undefined ? taken : Effect.flatMap(writing, () => taken)
        }),
        (cause): Effect.Effect<NonEmptyReadonlyArray<Uint8Array>, Cause.Done, R2> => {
          ended = true
          if (Pull.isDoneCause(cause)) {
            writer.end(undefined)
            return taken
          }
          writer.end(cause)
          return Effect.flatMap(Scope.close(runScope, Exit.failCause(cause)), () => taken)
        }
      )
      /** What was written, or the next pull's when nothing was (an event may write nothing). */
      const taken: Effect.Effect<NonEmptyReadonlyArray<Uint8Array>, Cause.Done, R2> = Effect.suspend(() =>
        writer.text.length > 0 ? Effect.succeed(take(writer)) : ended ? Cause.done() : next
      )
      return taken
    })
  }))

/** Writes `chunk` from `from` on, waiting for an event that gives an effect before the next. */
const writeAll = <R>(
  writer: TextWriter<R>,
  chunk: ReadonlyArray<AgentEvent<unknown>>,
  from: number
): Effect.Effect<void, never, R> | undefined => {
  for (let i = from; i < chunk.length; i++) {
    const writing = writer.event(chunk[i]!)
    if (writing !== undefined) return Effect.flatMap(writing, () => writeAll(writer, chunk, i + 1) ?? Effect.void)
  }
  return undefined
}

const take = (writer: TextWriter<unknown>): NonEmptyReadonlyArray<Uint8Array> => {
  const chunk = textEncoder.encode(writer.text)
  writer.text = ""
  return [chunk]
}

/**
 * Waits until `wakeAll(waiters)`, and resumes then through the scheduler,
 * not inside the caller (as `Effect.callback`'s `resume` does): the writer
 * goes on writing, and the reader, woken, takes all it wrote. Resumed at
 * once, the reader took one event a pull (1.44 × `Agent.stream` alone served).
 */
const waitIn = (waiters: Set<() => void>): Effect.Effect<void> =>
  Effect.withFiber((fiber) =>
    Effect.callback<void>((resume) => {
      const wake = () => fiber.currentDispatcher.scheduleTask(() => resume(Effect.void), 0)
      waiters.add(wake)
      return Effect.sync(() => {
        waiters.delete(wake)
      })
    })
  )

const wakeAll = (waiters: Set<() => void>) => {
  if (waiters.size === 0) return
  for (const wake of waiters) wake()
  waiters.clear()
}

/** The runtime's `TextEncoder` (named here: the package has no DOM types). */
const textEncoder = new (globalThis as unknown as {
  readonly TextEncoder: new() => { encode(text: string): Uint8Array }
}).TextEncoder()
