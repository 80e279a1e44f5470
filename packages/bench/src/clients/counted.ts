/**
 * How the streaming clients built on `effect/Stream` read a stream, as a
 * user would: `Stream.runForEach` with an effect per chunk, or
 * `Stream.runFold`. Each counts the chunks and checks `finish_reason` on the
 * last.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { checkStream } from "./common.js"

interface Chunk {
  readonly choices: ReadonlyArray<{ readonly finish_reason?: string | null | undefined }>
}

const isFinished = (chunk: Chunk) => typeof chunk.choices[0]?.finish_reason === "string"

/** Reads `source` to its end and checks it held `chunks` chunks, the last finished. */
export const counted = <E, R>(source: Stream.Stream<Chunk, E, R>, chunks: number, fold: boolean): Effect.Effect<void, E, R> => {
  const read = fold
    ? Stream.runFold(source, () => ({ seen: 0, finished: false }), (acc, chunk) => {
      acc.seen++
      acc.finished = isFinished(chunk)
      return acc
    })
    : Effect.suspend(() => {
      const acc = { seen: 0, finished: false }
      return Effect.as(
        Stream.runForEach(source, (chunk) =>
          Effect.sync(() => {
            acc.seen++
            acc.finished = isFinished(chunk)
          })),
        acc
      )
    })
  return Effect.map(read, ({ finished, seen }) => checkStream(seen, chunks, finished))
}
