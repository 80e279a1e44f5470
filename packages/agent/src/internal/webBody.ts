/**
 * A stream of bytes as a web `ReadableStream` that gives the reader, at each
 * read, everything produced since its last read as one chunk.
 *
 * `Stream.toReadableStreamWith` pulls one chunk per read (a promise, and
 * the fiber parked on a latch after each chunk). Here the fiber runs ahead,
 * as `NodeHttpServer` writes a streamed body: a chunk made while a read
 * waits is handed over at once (nothing is held back to batch it), one made
 * while the reader is busy waits for its next read with whatever else came
 * meanwhile. Past `maxPending` bytes not yet read, the fiber waits for a read.
 * As with `effect`'s, nothing is pulled before the first read.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Latch from "effect/Latch"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { joinBytes } from "@switchboard/core/internal/bytes"

/** What this module uses of a `ReadableStream`'s controller (named here: the package has no DOM types). */
interface Controller {
  enqueue(chunk: Uint8Array): void
  close(): void
  error(reason: unknown): void
}

interface Source {
  start(controller: Controller): void
  pull(controller: Controller): Promise<void> | undefined
  cancel(): Promise<void>
}

/** An `AbortSignal` as far as this module reads it. */
export interface Signal {
  readonly aborted: boolean
  addEventListener(type: "abort", listener: () => void, options: { readonly once: boolean }): void
  removeEventListener(type: "abort", listener: () => void): void
}

const ReadableStream = (globalThis as unknown as {
  readonly ReadableStream: new(source: Source, strategy: { readonly highWaterMark: number }) => unknown
}).ReadableStream

/** Bytes made but not read after which the stream waits for a read. */
const maxPending = 64 * 1024

/**
 * The body as a `ReadableStream`, run with `context`. The signal (the
 * request's) and a cancelled body interrupt the stream; a failure errors the
 * body, as `Stream.toReadableStreamWith` does. `scope` (the request's, its
 * closing handed over by the caller) is closed with the run's exit once the
 * stream has ended, before the body is closed.
 */
export const toReadableStream = (
  body: Stream.Stream<Uint8Array, unknown>,
  context: Context.Context<never>,
  signal: Signal | undefined,
  scope?: Scope.Closeable | undefined
): unknown => {
  let pending: Array<Uint8Array> = []
  let size = 0
  /** A read that found nothing: resolved by the next chunk, or the end. */
  let waiting: (() => void) | undefined
  /** The fiber, parked past `maxPending` until a read. */
  let parked: ((effect: Effect.Effect<void>) => void) | undefined
  let fiber: Fiber.Fiber<void, unknown> | undefined
  let cancelled = false
  // The first pull waits for the first read; the stream itself (and its finalizers) is set up at once.
  const firstRead = Latch.makeUnsafe(false)
  const gated = Stream.fromChannel(Channel.transformPull(Stream.toChannel(body), (pull) => Effect.as(firstRead.await, pull)))
  const onAbort = () => fiber?.interruptUnsafe()
  const flush = (controller: Controller) => {
    controller.enqueue(joinBytes(pending, size))
    pending = []
    size = 0
  }

  return new ReadableStream({
    start(controller) {
      const offer = (chunk: ReadonlyArray<Uint8Array>): Effect.Effect<void> => {
        for (const bytes of chunk) {
          pending.push(bytes)
          size += bytes.byteLength
        }
        if (waiting !== undefined) {
          flush(controller)
          const resolve = waiting
          waiting = undefined
          resolve()
          return Effect.void
        }
        return size < maxPending ? Effect.void : Effect.callback<void>((resume) => {
          parked = resume
        })
      }
      const run = Stream.runForEachArray(gated, offer)
      fiber = Effect.runForkWith(context)(scope === undefined ? run : Effect.onExit(run, (exit) => Scope.close(scope, exit)))
      fiber.addObserver((exit) => {
        signal?.removeEventListener("abort", onAbort)
        if (cancelled) return
        if (exit._tag === "Failure" && signal?.aborted !== true) {
          controller.error(Cause.squash(exit.cause))
        } else {
          if (size > 0) flush(controller)
          controller.close()
        }
        const resolve = waiting
        waiting = undefined
        resolve?.()
      })
      if (signal !== undefined && fiber.pollUnsafe() === undefined) {
        if (signal.aborted) onAbort()
        else signal.addEventListener("abort", onAbort, { once: true })
      }
    },
    pull(controller) {
      firstRead.openUnsafe()
      if (size > 0) {
        flush(controller)
        const resume = parked
        parked = undefined
        resume?.(Effect.void)
        return undefined
      }
      if (fiber?.pollUnsafe() !== undefined) return undefined
      return new Promise<void>((resolve) => {
        waiting = resolve
      })
    },
    cancel() {
      cancelled = true
      return fiber === undefined ? Promise.resolve() : Effect.runPromise(Fiber.interrupt(fiber))
    }
  }, { highWaterMark: 0 })
}
