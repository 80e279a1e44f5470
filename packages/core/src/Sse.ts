/**
 * Server-sent events: bytes or text → events, in constant memory.
 *
 * Line and field parsing is `eventsource-parser`'s (linear in the input, and
 * it holds back a `\r` that ends a read until it knows whether a `\n`
 * follows); this module adapts it to a `Channel` and adds what a response
 * body needs: a final event without its blank line is still dispatched
 * (marked `unterminated` when even its last line lacks its end, so a reader
 * can tell a complete event from a cut one), and an event larger than
 * `maxEventSize` fails instead of growing the buffer.
 * See `docs/streaming.md` for why this parser and not Effect's own (`effect/encoding/Sse`).
 *
 * @since 0.1.0
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Stream from "effect/Stream"
import { createParser } from "eventsource-parser"
import * as Streams from "./internal/streams.js"
import { ResponseTooLargeError } from "./SwitchboardError.js"

/**
 * One dispatched event. `event` is `undefined` for the default `message`
 * type; comment lines (`: keep-alive`) never become events.
 *
 * @since 0.1.0
 * @category models
 */
export interface Event {
  readonly event?: string | undefined
  readonly id?: string | undefined
  readonly data: string
  /**
   * The body ended inside this event's last line: its data may be whole
   * (a server that closed right after it) or cut. Only the last event can be.
   */
  readonly unterminated?: true | undefined
}

/**
 * Limits of the server-sent-event decoder: the most characters one event may
 * hold.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions {
  /**
   * Most characters one pending event may hold before the stream fails with
   * a `ResponseTooLargeError`; what bounds the decoder's memory. Counted
   * over everything read since the last event: its data, and its field
   * names, line ends, comments and blank lines too. Default 16 MiB.
   */
  readonly maxEventSize?: number | undefined
}

/**
 * The default of `DecodeOptions.maxEventSize`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxEventSize = 16 * 1024 * 1024

const LF = 10
const CR = 13

// As `URL` in SwitchboardConfig: present everywhere the SDK runs, untyped in core's build.
declare const TextDecoder: new () => {
  readonly decode: (bytes?: Uint8Array, options?: { readonly stream?: boolean }) => string
}

/** A read of the parser's input, or its output: never empty, as Effect 4's streams carry them. */
type Batch<A> = Arr.NonEmptyReadonlyArray<A>

/**
 * The parser as a channel from reads of any input type to events: `text`
 * turns one read into text, `rest` gives what is left at the end (the tail
 * of a character split across reads).
 */
const parserChannel = <In, E>(
  text: (input: In) => string,
  rest: () => string,
  options: DecodeOptions | undefined
): Channel.Channel<Batch<Event>, E | ResponseTooLargeError, void, Batch<In>, E, unknown> =>
  Streams.batches<In, Event, ResponseTooLargeError, E>(() => {
    const maxEventSize = options?.maxEventSize ?? defaultMaxEventSize
    // Where the parser puts the events of the read being fed.
    let events: Array<Event> = []
    let tooLarge = false
    // Whether the text so far ends at a line end: decides what happens at the end.
    let atLineEnd = true
    let ended = false
    // Characters read since the last read that completed an event. The parser
    // counts an event's data alone, but holds each of its lines as a string of
    // its own: an event of short lines (`data: a`) took 30 bytes a character.
    let sinceEvent = 0
    let dispatched = false
    const parser = createParser({
      onEvent: (event) => {
        dispatched = true
        events.push(ended && !atLineEnd ? { ...event, unterminated: true } : event)
      },
      onError: (error) => {
        // Unknown fields and bad `retry` values are ignored, as the spec says.
        if (error.type === "max-buffer-size-exceeded") tooLarge = true
      },
      maxBufferSize: maxEventSize
    })

    const feed = (piece: string): boolean => {
      if (piece.length === 0) return true
      dispatched = false
      parser.feed(piece)
      sinceEvent = dispatched ? 0 : sinceEvent + piece.length
      if (tooLarge || sinceEvent > maxEventSize) return false
      const last = piece.charCodeAt(piece.length - 1)
      atLineEnd = last === LF || last === CR
      return true
    }
    const failTooLarge = Effect.fail(
      new ResponseTooLargeError({ message: `a server-sent event exceeded ${maxEventSize} characters`, limit: maxEventSize })
    )
    // Events parsed before an event grew too large still go out first.
    return {
      onBatch: (inputs, out) => {
        events = out
        for (const input of inputs) if (!feed(text(input))) return failTooLarge
        return undefined
      },
      onEnd: (out) => {
        events = out
        if (!feed(rest())) return failTooLarge
        // A last event that lacks its blank line is dispatched (the spec drops
        // it); one whose last line lacks its end too is marked `unterminated`.
        ended = true
        parser.feed("\n\n")
        return Cause.done()
      }
    }
  })

/**
 * A channel from text (any split: a line or an event may span many reads,
 * one read may hold many events) to events, emitted as one batch per read
 * that completed at least one event.
 *
 * @since 0.1.0
 * @category decoding
 */
export const channel = <E>(
  options?: DecodeOptions
): Channel.Channel<Batch<Event>, E | ResponseTooLargeError, void, Batch<string>, E, unknown> =>
  Channel.suspend(() => parserChannel<string, E>((text) => text, () => "", options))

/**
 * `channel` from bytes (UTF-8): decoding and parsing in one stage. A
 * character split across two reads is decoded whole.
 *
 * @since 0.1.0
 * @category decoding
 */
export const bytesChannel = <E>(
  options?: DecodeOptions
): Channel.Channel<Batch<Event>, E | ResponseTooLargeError, void, Batch<Uint8Array>, E, unknown> =>
  Channel.suspend(() => {
    const decoder = new TextDecoder()
    return parserChannel<Uint8Array, E>((bytes) => decoder.decode(bytes, { stream: true }), () => decoder.decode(), options)
  })

const isStream = (args: IArguments) => Stream.isStream(args[0])

/**
 * Text → events.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeText: {
  (options?: DecodeOptions): <E, R>(self: Stream.Stream<string, E, R>) => Stream.Stream<Event, E | ResponseTooLargeError, R>
  <E, R>(self: Stream.Stream<string, E, R>, options?: DecodeOptions): Stream.Stream<Event, E | ResponseTooLargeError, R>
} = /* @__PURE__ */ dual(
  isStream,
  <E, R>(self: Stream.Stream<string, E, R>, options?: DecodeOptions) =>
    Stream.pipeThroughChannel(self, channel<E>(options))
)

/**
 * Bytes (UTF-8, as read from a response body) → events. A character split
 * across two reads is decoded whole.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode: {
  (options?: DecodeOptions): <E, R>(self: Stream.Stream<Uint8Array, E, R>) => Stream.Stream<Event, E | ResponseTooLargeError, R>
  <E, R>(self: Stream.Stream<Uint8Array, E, R>, options?: DecodeOptions): Stream.Stream<Event, E | ResponseTooLargeError, R>
} = dual(
  isStream,
  <E, R>(self: Stream.Stream<Uint8Array, E, R>, options?: DecodeOptions) =>
    Stream.pipeThroughChannel(self, bytesChannel<E>(options))
)
