/**
 * The codings fetch hands on undecoded, undone in the page. fetch undoes a
 * `content-encoding` list only when it takes every name in it
 * (`Decoding.leftByFetch`): `identity, gzip` comes as gzip bytes. The wire
 * undoes those with the runtime's `DecompressionStream` (gzip; deflate,
 * zlib-wrapped or raw as its first bytes say; br where it takes `brotli`),
 * one read at a time, so the limits still count decoded bytes and nothing is
 * decoded ahead of the reader.
 */
import * as HttpWire from "@switchboard/core/HttpWire"
import * as Decoding from "@switchboard/core/internal/decoding"

/** A body to read, and what a failed read of it is. */
export interface Readable {
  readonly body: ReadableStream<Uint8Array> | null
  /** `decode` for a coded body that does not decode; else as `Decoding.readFailure` says. */
  readonly failure: (cause: unknown) => HttpWire.WireError
}

const formatOf = (coding: Decoding.Coding, first: Uint8Array): string =>
  coding === "gzip" ? "gzip" : coding === "br" ? "brotli" : Decoding.zlibWrapped(first) ? "deflate" : "deflate-raw"

/** A stream read one chunk per pull: nothing is read ahead of the reader. */
const pulled = (
  read: () => Promise<ReadableStreamReadResult<Uint8Array>>,
  cancel: (reason: unknown) => Promise<void>
): ReadableStream<Uint8Array> =>
  new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      const next = await read()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    cancel
  }, { highWaterMark: 0 })

/** `body`, with the errors of its reads (a lost connection, an abort) recorded in `lost`. */
const tracked = (body: ReadableStream<Uint8Array>, lost: WeakSet<object>) => {
  const reader = body.getReader()
  return pulled(
    () =>
      reader.read().catch((cause: unknown) => {
        if (typeof cause === "object" && cause !== null) lost.add(cause)
        throw cause
      }),
    (reason) => reader.cancel(reason)
  )
}

/**
 * `source` undone of one coding: a `DecompressionStream` made at the first
 * bytes, fed as the reader pulls (its writer's backpressure holds the input
 * back). A failed input fails the output with the input's own error.
 */
const undo = (source: ReadableStream<Uint8Array>, coding: Decoding.Coding): ReadableStream<Uint8Array> => {
  const input = source.getReader()
  const start = async (): Promise<ReadableStreamDefaultReader<Uint8Array> | undefined> => {
    const first = await input.read()
    if (first.done) return undefined
    let inner: DecompressionStream
    try {
      inner = new DecompressionStream(formatOf(coding, first.value) as CompressionFormat)
    } catch {
      throw new Error(`this runtime cannot decode ${coding}`)
    }
    const writer = inner.writable.getWriter()
    const feed = async () => {
      let next: ReadableStreamReadResult<Uint8Array> = first
      while (!next.done) {
        await writer.write(next.value as Uint8Array<ArrayBuffer>)
        next = await input.read()
      }
      await writer.close()
    }
    feed().catch((cause: unknown) => writer.abort(cause).catch(() => undefined))
    return inner.readable.getReader()
  }
  let output: Promise<ReadableStreamDefaultReader<Uint8Array> | undefined> | undefined
  return pulled(
    async () => {
      output ??= start()
      const reader = await output
      return reader === undefined ? { done: true, value: undefined } : reader.read()
    },
    async (reason) => {
      await input.cancel(reason)
      const reader = await output?.catch(() => undefined)
      await reader?.cancel(reason).catch(() => undefined)
    }
  )
}

const messageOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause)).slice(0, 120)

/**
 * The body of `response` as the wire reads it, with what fetch left coded
 * undone; or why it cannot be read (a coding the SDK does not take).
 * (Cross-origin, `content-encoding` is hidden unless the service exposes
 * it: then fetch alone judges.)
 */
export const readableOf = (response: Response, contentEncoding: string | undefined): Readable | HttpWire.WireError => {
  const codings = Decoding.leftByFetch(contentEncoding)
  if (codings instanceof HttpWire.WireError) return codings
  if (codings === undefined || response.body === null) return { body: response.body, failure: Decoding.readFailure }
  const lost = new WeakSet<object>()
  return {
    body: codings.reduce(undo, tracked(response.body, lost)),
    failure: (cause) =>
      typeof cause === "object" && cause !== null && lost.has(cause) ?
        Decoding.readFailure(cause) :
        Decoding.failure(`the reply's coded body (${codings.join(", ")}) does not decode: ${messageOf(cause)}`)
  }
}
