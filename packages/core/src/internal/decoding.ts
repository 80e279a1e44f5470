/**
 * Content codings (`content-encoding`) every wire undoes the same way:
 * gzip, deflate (zlib-wrapped or raw, as browsers take it) and br, over
 * `node:zlib`'s streaming decompressors, which the caller hands in (core
 * loads no Node module). Decoding is pushed and paused, so a wire counts the
 * decoded bytes against its limits and holds no more than one read past them:
 * a small body that inflates to gigabytes ends at the limit. Importable by
 * the other Switchboard packages (`@switchboard/core/internal/decoding`),
 * not part of the public API.
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import * as HttpWire from "../HttpWire.js"

/** What `accept-encoding` says a wire takes. */
export const accepted = "gzip, deflate, br"

export type Coding = "gzip" | "deflate" | "br"

/** The part of a `node:zlib` stream decoding uses. */
export interface ZlibStream {
  write(chunk: Uint8Array, done?: (error?: Error | null) => void): boolean
  end(): unknown
  pause(): unknown
  resume(): unknown
  destroy(): unknown
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown
  on(event: "end" | "drain", listener: () => void): unknown
  on(event: "error", listener: (error: Error) => void): unknown
}

/** The part of `node:zlib` decoding uses. */
export interface Zlib {
  createGunzip(): ZlibStream
  createInflate(): ZlibStream
  createInflateRaw(): ZlibStream
  createBrotliDecompress(): ZlibStream
}

export const failure = (message: string) => new HttpWire.WireError({ reason: "decode", cause: new Error(message) })

/** The names of a `content-encoding` list, in lower case, without the spaces around them. */
const namesOf = (header: string): Array<string> => header.split(",").map((name) => name.trim().toLowerCase())

/** Most names a `content-encoding` list may have, as undici's fetch takes. */
const maxCodings = 5

/** A name from the service as an error may show it: printable ASCII, short. */
const printable = (name: string): string => JSON.stringify(name.slice(0, 40)).replace(/[^\x20-\x7e]/g, "?")

/**
 * The one rule for a `content-encoding` list (RFC 9110), for every wire: the
 * codings to undo, first to undo first (the list names them in the order
 * they were applied), or `undefined` when there are none. Names are taken in
 * any case and with any spaces around them; `identity` and empty names are
 * nothing, `x-gzip` is gzip. A coding the SDK does not take fails, naming it
 * (printable only), rather than handing on bytes nobody can read.
 */
export const codingsOf = (header: string | undefined): ReadonlyArray<Coding> | HttpWire.WireError | undefined => {
  if (header === undefined) return undefined
  const names = namesOf(header)
  // A decompressor per coding holds its window: a hostile list of thousands would hold gigabytes.
  if (names.length > maxCodings) {
    return failure(`the reply's content-encoding lists ${names.length} codings; at most ${maxCodings} are taken`)
  }
  const codings: Array<Coding> = []
  for (const name of names) {
    if (name === "" || name === "identity") continue
    if (name === "gzip" || name === "x-gzip") codings.unshift("gzip")
    else if (name === "deflate" || name === "br") codings.unshift(name)
    else return failure(`the reply's content-encoding ${printable(name)} is none of ${accepted}`)
  }
  return codings.length === 0 ? undefined : codings
}

/** What fetch undoes by itself, in browsers and in Node's undici alike (zstd where the runtime has it). */
const takenByFetch = new Set(["gzip", "x-gzip", "deflate", "br", "zstd"])

/**
 * `codingsOf` for a body fetch has read. fetch undoes a list only when it
 * takes every name in it (the Fetch standard: "if codings are not
 * supported, return bytes"), so `identity, gzip` or `gzip, identity` come
 * coded, which the wire then undoes itself; a list of names fetch takes
 * comes decoded. zstd is let through there, since a browser that asked for
 * it decoded it.
 */
export const leftByFetch = (header: string | undefined): ReadonlyArray<Coding> | HttpWire.WireError | undefined =>
  header === undefined || namesOf(header).every((name) => takenByFetch.has(name)) ? undefined : codingsOf(header)

/**
 * A failed read → its `WireError`: `decode` when a zlib error (`Z_…` for
 * gzip and deflate, `ERR__…` for br) is in the cause's chain, as when a
 * client that decodes by itself (fetch) meets a corrupt body; else `response`.
 */
export const readFailure = (cause: unknown): HttpWire.WireError => {
  let inner = cause
  for (let depth = 0; typeof inner === "object" && inner !== null && depth < 5; depth++) {
    const { code, message } = inner as { readonly code?: unknown; readonly message?: unknown }
    if (typeof code === "string" && (code.startsWith("Z_") || code.startsWith("ERR__"))) {
      return failure(`the reply's coded body is corrupt (${String(message)})`)
    }
    inner = (inner as { readonly cause?: unknown }).cause
  }
  return new HttpWire.WireError({ reason: "response", cause })
}

/** A zlib header (RFC 1950): method 8, a window of at most 32 KiB, and its check. */
export const zlibWrapped = (bytes: Uint8Array) =>
  (bytes[0]! & 0x0f) === 8 && bytes[0]! >> 4 <= 7 && (bytes.length < 2 || ((bytes[0]! << 8) | bytes[1]!) % 31 === 0)

const streamFor = (zlib: Zlib, coding: Coding, first: Uint8Array): ZlibStream =>
  coding === "gzip" ?
    zlib.createGunzip() :
    coding === "br" ?
    zlib.createBrotliDecompress() :
    zlibWrapped(first) ?
    zlib.createInflate() :
    zlib.createInflateRaw()

export interface Sink {
  readonly data: (chunk: Uint8Array) => void
  readonly end: () => void
  readonly error: (error: HttpWire.WireError) => void
  /** The decoder takes input again after a `write` that said to wait. */
  readonly drain: () => void
}

export interface Decoder {
  /** `false`: hold further input until `Sink.drain`. `done` once this input is taken in. */
  readonly write: (chunk: Uint8Array, done?: () => void) => boolean
  readonly end: () => void
  /** Stops decoded bytes coming (the input then backs up) until `resume`. */
  readonly pause: () => void
  readonly resume: () => void
  readonly destroy: () => void
}

/**
 * A chain of decompressors, one per coding, each made at its first input (a
 * deflate body says by its first bytes whether it is zlib-wrapped). Each
 * stage pauses while the next one is full.
 */
export const make = (zlib: Zlib, codings: ReadonlyArray<Coding>, sink: Sink): Decoder => {
  const stages: Array<ZlibStream | undefined> = codings.map(() => undefined)
  let over = false
  const fail = (coding: Coding, error: Error) => {
    if (over) return
    over = true
    stages.forEach((stage) => stage?.destroy())
    sink.error(failure(`the reply's coded body is corrupt (${coding}: ${error.message})`))
  }
  const stage = (i: number, first: Uint8Array): ZlibStream => {
    const existing = stages[i]
    if (existing !== undefined) return existing
    const made = streamFor(zlib, codings[i]!, first)
    stages[i] = made
    const last = i === codings.length - 1
    made.on("error", (error) => fail(codings[i]!, error))
    made.on("data", (chunk) => {
      if (over) return
      if (last) return sink.data(chunk)
      if (!stage(i + 1, chunk).write(chunk)) made.pause()
    })
    made.on("drain", () => (i === 0 ? sink.drain() : stages[i - 1]?.resume()))
    made.on("end", () => {
      if (over) return
      if (!last) return void stage(i + 1, new Uint8Array(0)).end()
      over = true
      sink.end()
    })
    return made
  }
  return {
    write: (chunk, done) => {
      if (over) return true
      if (chunk.length === 0) {
        done?.()
        return true
      }
      return stage(0, chunk).write(chunk, done && (() => done()))
    },
    end: () => void stage(0, new Uint8Array(0)).end(),
    pause: () => void stages[stages.length - 1]?.pause(),
    resume: () => void stages[stages.length - 1]?.resume(),
    destroy: () => {
      over = true
      stages.forEach((stage) => stage?.destroy())
    }
  }
}

declare const globalThis: { readonly process?: { readonly getBuiltinModule?: (id: string) => unknown } }

/** `node:zlib` where the runtime has it (Node 20.16+, Deno, Bun), without importing it. */
export const builtinZlib = (): Zlib | undefined => globalThis.process?.getBuiltinModule?.("node:zlib") as Zlib | undefined

/**
 * `body` decoded as `codings` say, one read at a time: a read pulls input
 * only when no decoded bytes wait, so nothing is decoded ahead of the reader.
 */
export const decodeStream = <E>(
  zlib: Zlib,
  codings: ReadonlyArray<Coding>,
  body: Stream.Stream<Uint8Array, E>
): Stream.Stream<Uint8Array, E | HttpWire.WireError> =>
  Stream.unwrap(Effect.map(Stream.toPull(body), (pullInput) => {
    let ready: Array<Uint8Array> = []
    let ended = false
    let error: HttpWire.WireError | undefined
    /** Input handed to the decoder and not yet taken in, or the input's end. */
    let busy = false
    let inputDone = false
    let wake: (() => void) | undefined
    const notify = () => {
      const resume = wake
      wake = undefined
      resume?.()
    }
    const decoder = make(zlib, codings, {
      data: (chunk) => {
        ready.push(chunk)
        decoder.pause()
        notify()
      },
      end: () => {
        ended = true
        notify()
      },
      error: (e) => {
        error = e
        notify()
      },
      drain: notify
    })
    // Resumes at once when something happened since the last look.
    const wait = Effect.callback<void>((resume) => {
      if (ready.length > 0 || ended || error !== undefined || !(busy || inputDone)) return resume(Effect.void)
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    })
    const taken = () => {
      busy = false
      notify()
    }
    const feed = Effect.matchEffect(pullInput, {
      onFailure: (e) =>
        Cause.isDone(e) ?
          Effect.sync(() => {
            inputDone = true
            decoder.end()
          }) :
          Effect.fail(e),
      onSuccess: (parts) =>
        Effect.sync(() => {
          busy = true
          parts.forEach((chunk, i) => decoder.write(chunk, i === parts.length - 1 ? taken : undefined))
        })
    })
    const read: Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, E | HttpWire.WireError> = Effect.suspend(() => {
      if (ready.length > 0) {
        const out = ready as unknown as Arr.NonEmptyReadonlyArray<Uint8Array>
        ready = []
        decoder.resume()
        return Effect.succeed(out)
      }
      if (error !== undefined) return Effect.fail(error)
      if (ended) return Cause.done()
      return Effect.andThen(busy || inputDone ? wait : feed, read)
    })
    return Stream.ensuring(Stream.fromPull(Effect.succeed(read)), Effect.sync(() => decoder.destroy()))
  }))

const withAccept = new WeakMap<Readonly<Record<string, string>>, Readonly<Record<string, string>>>()

/**
 * `headers` with `accept-encoding` (unless they have one), made once per
 * headers object: `Transport` reuses its settings' headers call after call.
 */
export const acceptEncoding = (headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> => {
  let out = withAccept.get(headers)
  if (out === undefined) {
    out = "accept-encoding" in headers ? headers : Object.assign({}, headers, { "accept-encoding": accepted })
    withAccept.set(headers, out)
  }
  return out
}
