/**
 * `Transport`'s policy over a scripted `HttpWire`, under `TestClock`:
 * retries and their waits, `Retry-After`, `x-should-retry`, the limits it
 * hands to the wire, status and wire errors, interruption, per-call options,
 * and the life of a call's span. (Real HTTP is the node package's tests.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Tracer from "effect/Tracer"
import * as HttpWire from "../src/HttpWire.js"
import type * as GenAi from "../src/internal/genAi.js"
import * as RequestOptions from "../src/RequestOptions.js"
import type * as Retry from "../src/Retry.js"
import * as SwitchboardConfig from "../src/SwitchboardConfig.js"
import * as Transport from "../src/Transport.js"

const key = "sk-transport-test-key"

/** What one scripted exchange does: answer, fail, or never answer. */
type Reply =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly text?: string }
  | { readonly fail: HttpWire.WireError }
  | "hang"

interface Sent {
  readonly request: HttpWire.Request
  readonly limits: HttpWire.Limits | undefined
  /** The clock's time when it was sent. */
  readonly at: number
}

/**
 * A wire answering the n-th exchange with `script(n)`. A streamed 2xx body
 * is `body(n)`; every exchange records what it was sent, whether it was
 * interrupted or its scope closed, and whether it was committed. It keeps no
 * time limit itself: a limit running out is scripted as its `WireError`.
 */
const scriptedWire = (
  script: (n: number) => Reply,
  body: (n: number) => Stream.Stream<Uint8Array, HttpWire.WireError> = () => Stream.empty
) => {
  const sent: Array<Sent> = []
  const ended: Array<number> = []
  const committed: Array<number> = []
  const reply = (request: HttpWire.Request, limits: HttpWire.Limits | undefined) =>
    Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (at) => {
    sent.push({ request, limits, at })
    const n = sent.length
    const answer = script(n)
    const result: Effect.Effect<{ n: number; status: number; headers: Record<string, string>; text: string }, HttpWire.WireError> =
      answer === "hang" ?
        Effect.never :
        "fail" in answer ?
        Effect.fail(answer.fail) :
        Effect.succeed({ n, status: answer.status, headers: answer.headers ?? {}, text: answer.text ?? "" })
    return Effect.onInterrupt(result, () => Effect.sync(() => ended.push(n)))
  })
  const wire: HttpWire.Service = {
    text: (request, limits) => Effect.map(reply(request, limits), ({ headers, status, text }) => ({ status, headers, text })),
    open: (request, limits) =>
      Effect.flatMap(reply(request, limits), ({ headers, n, status }) =>
        Effect.as(Effect.addFinalizer(() => Effect.sync(() => ended.push(n))), {
          status,
          headers: { "content-type": "text/event-stream", ...headers },
          body: body(n),
          commit: () => void committed.push(n)
        }))
  }
  return { sent, ended, committed, wire }
}

const transportOver = (wire: HttpWire.Service, options: Partial<SwitchboardConfig.Options> = {}) =>
  Layer.effect(Transport.Transport, Transport.make).pipe(
    Layer.provide(Layer.succeed(HttpWire.HttpWire, wire)),
    Layer.provide(
      SwitchboardConfig.layer({ baseUrl: "http://127.0.0.1:9", apiKey: key, retryBaseDelay: "1 second", ...options })
    )
  )

const getJson = (retry?: Retry.CallClass) =>
  Effect.flatMap(Effect.service(Transport.Transport), (transport) =>
    transport.call({
      method: "GET",
      path: "/things",
      decode: (u) => Result.succeed(u),
      genAi: { operation: "list_models" },
      retry
    }))

const utf8 = new TextEncoder()
const bytes = (text: string) => Stream.make(utf8.encode(text))

/** What a stream of lines says for its span: nothing. */
const noFacts: GenAi.Facts<string> = {
  add: () => {},
  firstMillis: () => undefined,
  reply: () => ({ attributes: {} }),
  output: () => ({})
}

/** A stream of the body's text, split in lines: committed at the first line. */
const lines = (options: Partial<Transport.StreamOptions<string>> = {}) =>
  Stream.unwrap(Effect.map(Effect.service(Transport.Transport), (transport) =>
    transport.stream({
      method: "POST",
      path: "/lines",
      body: { hello: "world" },
      genAi: { operation: "chat", model: "lines", facts: () => noFacts },
      decode: (body) =>
        Stream.splitLines(Stream.decodeText(body)).pipe(Stream.filter((line) => line !== "")),
      ...options
    })))

const waitUntil = <A>(effect: Effect.Effect<A>, done: (a: A) => boolean): Effect.Effect<A> =>
  Effect.flatMap(effect, (a) => (done(a) ? Effect.succeed(a) : Effect.andThen(Effect.yieldNow, waitUntil(effect, done))))

/** Forks `effect` and lets it start, so that it waits on the clock before a test moves it. */
const started = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.tap(Effect.forkChild(effect), () => Effect.yieldNow)

/**
 * Moves the clock past the waits between attempts (at most `maxRetryDelay`,
 * a minute): Effect 4's TestClock runs each sleeper it wakes, and what that
 * one then does, before the next.
 */
const nextSleep = TestClock.adjust("1 minute")

describe("retries", () => {
  it.effect("a 503 is retried maxRetries times, then its error is returned as it came", () => {
    const { sent, wire } = scriptedWire(() => ({ status: 503, text: `{"error":{"message":"busy"}}` }))
    return Effect.gen(function*() {
      const fiber = yield* started(Effect.flip(getJson()))
      yield* nextSleep
      yield* nextSleep
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "ServerError", status: 503, message: "busy" })
      expect(sent).toHaveLength(3)
    }).pipe(Effect.provide(transportOver(wire, { maxRetries: 2 })))
  })

  it.effect("Retry-After is the wait before the next attempt (capped by maxRetryDelay)", () => {
    const { sent, wire } = scriptedWire((n) => n === 1 ? { status: 429, headers: { "retry-after": "7" } } : { status: 200, text: "{}" })
    return Effect.gen(function*() {
      const fiber = yield* started(getJson())
      // The wait is exactly 7 s: not over at 6.999 s, over at 7 s.
      yield* TestClock.adjust("6999 millis")
      expect(sent).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      expect(sent).toHaveLength(2)
    }).pipe(Effect.provide(transportOver(wire, { maxRetries: 1 })))
  })

  it.effect("x-should-retry: false stops a retry the status would allow; true allows one it would not", () =>
    Effect.gen(function*() {
      const no = scriptedWire(() => ({ status: 503, headers: { "x-should-retry": "false" } }))
      const error = yield* Effect.flip(Effect.provide(getJson(), transportOver(no.wire, { maxRetries: 2 })))
      expect(error).toMatchObject({ _tag: "ServerError", shouldRetry: false })
      expect(no.sent).toHaveLength(1)

      const yes = scriptedWire((n) => n === 1 ? { status: 400, headers: { "x-should-retry": "true" } } : { status: 200, text: "{}" })
      const fiber = yield* started(Effect.provide(getJson(), transportOver(yes.wire, { maxRetries: 2 })))
      yield* nextSleep
      yield* Fiber.join(fiber)
      expect(yes.sent).toHaveLength(2)
    }))

  it.effect("an unsent-only call is repeated after a refused connection, not after a 500 or a lost reply", () =>
    Effect.gen(function*() {
      const refused = new HttpWire.WireError({ reason: "request", cause: { code: "ECONNREFUSED" } })
      const first = scriptedWire((n) => n === 1 ? { fail: refused } : { status: 200, text: "{}" })
      const fiber = yield* started(Effect.provide(getJson("unsent"), transportOver(first.wire)))
      yield* nextSleep
      yield* Fiber.join(fiber)
      expect(first.sent).toHaveLength(2)

      for (const reply of [{ status: 500 }, { fail: new HttpWire.WireError({ reason: "response" }) }] as const) {
        const { sent, wire } = scriptedWire(() => reply)
        const error = yield* Effect.flip(Effect.provide(getJson("unsent"), transportOver(wire)))
        expect(["ServerError", "TransportError"]).toContain(error._tag)
        expect(sent).toHaveLength(1)
      }
      // …unless the service says it is safe.
      const told = scriptedWire((n) => n === 1 ? { status: 500, headers: { "x-should-retry": "true" } } : { status: 200, text: "{}" })
      const retried = yield* started(Effect.provide(getJson("unsent"), transportOver(told.wire)))
      yield* nextSleep
      yield* Fiber.join(retried)
      expect(told.sent).toHaveLength(2)
    }))

  it.effect("a call of class never is sent once", () => {
    const { sent, wire } = scriptedWire(() => ({ status: 503 }))
    return Effect.gen(function*() {
      yield* Effect.flip(getJson("never"))
      expect(sent).toHaveLength(1)
    }).pipe(Effect.provide(transportOver(wire)))
  })
})

describe("replies and wire failures → typed errors", () => {
  it.effect("a status outside 2xx is its error with the service's message and request id; never retried when final", () => {
    const { sent, wire } = scriptedWire(() => ({
      status: 404,
      headers: { "x-request-id": "req_9" },
      text: `{"error":{"message":"no such model","code":"model_not_found"}}`
    }))
    return Effect.gen(function*() {
      const error = yield* Effect.flip(getJson())
      expect(error).toMatchObject({ _tag: "NotFoundError", status: 404, message: "no such model", requestId: "req_9", code: "model_not_found" })
      expect(sent).toHaveLength(1)
    }).pipe(Effect.provide(transportOver(wire)))
  })

  it.effect("each wire failure has its error: timeouts by limit, too-large, lost connections", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [HttpWire.WireError, Record<string, unknown>]> = [
        [HttpWire.timeout("request"), { _tag: "TimeoutError", phase: "request" }],
        [new HttpWire.WireError({ reason: "too-large" }), { _tag: "ResponseTooLargeError", limit: 1000 }],
        [new HttpWire.WireError({ reason: "response" }), { _tag: "TransportError", sent: true }],
        [new HttpWire.WireError({ reason: "request", cause: { code: "ENOTFOUND" } }), { _tag: "TransportError", sent: false }]
      ]
      for (const [failure, expected] of cases) {
        const { wire } = scriptedWire(() => ({ fail: failure }))
        const error = yield* Effect.flip(Effect.provide(getJson(), transportOver(wire, { maxRetries: 0, maxResponseBytes: 1000 })))
        expect(error).toMatchObject(expected)
      }
    }))

  it.effect("a stream's body failures: idle and total limits, a cut after the first element", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [HttpWire.WireError, Record<string, unknown>]> = [
        [HttpWire.timeout("idle"), { _tag: "TimeoutError", phase: "idle", requestId: "req_s" }],
        [HttpWire.timeout("total"), { _tag: "TimeoutError", phase: "total" }],
        [new HttpWire.WireError({ reason: "response", cause: { code: "ECONNRESET" } }), {
          _tag: "StreamError",
          reason: "cut",
          message: "the connection was lost mid-stream (ECONNRESET)"
        }]
      ]
      for (const [failure, expected] of cases) {
        const { sent, wire } = scriptedWire(
          () => ({ status: 200, headers: { "x-request-id": "req_s" } }),
          () => Stream.concat(bytes("one\n"), Stream.fail(failure))
        )
        const [seen, error] = yield* Effect.provide(
          Effect.gen(function*() {
            const seen: Array<string> = []
            const error = yield* Effect.flip(Stream.runForEach(lines(), (line) => Effect.sync(() => seen.push(line))))
            return [seen, error] as const
          }),
          transportOver(wire)
        )
        expect(seen).toEqual(["one"])
        expect(error).toMatchObject(expected)
        expect(sent).toHaveLength(1)
      }
    }))

  it.effect("a JSON body where a stream was asked for is the service's error", () => {
    const { wire } = scriptedWire(() => ({ status: 200, headers: { "content-type": "application/json" } }), () =>
      bytes(`{"error":{"message":"model overloaded"}}`))
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Stream.runDrain(lines()))
      expect(error).toMatchObject({ _tag: "StreamError", reason: "error-event", message: "model overloaded" })
    }).pipe(Effect.provide(transportOver(wire)))
  })
})

describe("time limits", () => {
  it.effect("the wire is handed the request limit and the size limit of a call", () => {
    const { sent, wire } = scriptedWire(() => ({ status: 200, text: "{}" }))
    return Effect.gen(function*() {
      yield* getJson()
      expect(sent[0]!.limits).toEqual({ timeoutMillis: 30_000, maxBytes: 1234 })
    }).pipe(Effect.provide(transportOver(wire, { timeout: "30 seconds", maxResponseBytes: 1234 })))
  })

  it.effect("a stream: the first-byte limit, idle and what is left of the total go to the wire; retries spend the total", () => {
    const { sent, wire } = scriptedWire((n) => n === 1 ? { status: 503 } : { status: 200 }, () => bytes("a\n"))
    return Effect.gen(function*() {
      const fiber = yield* started(Stream.runCollect(lines()))
      yield* nextSleep
      expect(yield* Fiber.join(fiber)).toEqual(["a"])
      expect(sent[0]!.limits).toEqual({ firstByteMillis: 5000, idleMillis: 20_000, totalMillis: 600_000 })
      // The second attempt started after the (jittered) backoff: that much less is left.
      expect(sent[1]!.at).toBeGreaterThan(0)
      expect(sent[1]!.limits).toEqual({ firstByteMillis: 5000, idleMillis: 20_000, totalMillis: 600_000 - sent[1]!.at })
    }).pipe(Effect.provide(transportOver(wire, {
      streamFirstByteTimeout: "5 seconds",
      streamIdleTimeout: "20 seconds",
      streamTotalTimeout: "10 minutes"
    })))
  })

  it.effect("the first element commits the exchange (the wire's first-byte limit stops), not before", () => {
    const { committed, wire } = scriptedWire(() => ({ status: 200 }), () => Stream.concat(bytes(": ping\n\n"), bytes("a\nb\n")))
    return Effect.gen(function*() {
      const seen: Array<Array<number>> = []
      yield* Stream.runForEach(lines({ decode: (body) =>
        Stream.splitLines(Stream.decodeText(body)).pipe(Stream.filter((line) => line !== "" && !line.startsWith(":"))) }),
        () => Effect.sync(() => seen.push([...committed])))
      // Committed once, before the caller saw its first element.
      expect(seen).toEqual([[1], [1]])
    }).pipe(Effect.provide(transportOver(wire)))
  })

  it.effect("a first-byte timeout from the wire is retried per attempt, then is the error", () => {
    const { ended, sent, wire } = scriptedWire(() => ({ status: 200 }), () => Stream.fail(HttpWire.timeout("first-byte")))
    return Effect.gen(function*() {
      const fiber = yield* started(Effect.flip(Stream.runDrain(lines())))
      yield* nextSleep // the backoff
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "first-byte", message: "POST /v1/lines sent no data within 5000 ms" })
      expect(sent).toHaveLength(2)
      // Each timed-out attempt's exchange was closed.
      expect(ended).toEqual([1, 2])
    }).pipe(Effect.provide(transportOver(wire, { maxRetries: 1, streamFirstByteTimeout: "5 seconds" })))
  })

  it.effect("no limit (Infinity) is no timer: the wire gets none", () => {
    const { sent, wire } = scriptedWire(() => ({ status: 200, text: "{}" }), () => bytes("a\n"))
    return Effect.gen(function*() {
      yield* getJson()
      yield* Stream.runDrain(lines())
      expect(sent[0]!.limits).toEqual({ timeoutMillis: undefined, maxBytes: SwitchboardConfig.defaultMaxResponseBytes })
      expect(sent[1]!.limits).toEqual({ firstByteMillis: undefined, idleMillis: undefined, totalMillis: undefined })
    }).pipe(Effect.provide(
      transportOver(wire, { timeout: Infinity, streamFirstByteTimeout: Infinity, streamIdleTimeout: Infinity, streamTotalTimeout: Infinity })
    ))
  })
})

describe("interruption", () => {
  it.effect("interrupting a call interrupts its exchange", () => {
    const { ended, sent, wire } = scriptedWire(() => "hang")
    return Effect.gen(function*() {
      const fiber = yield* started(getJson())
      yield* waitUntil(Effect.sync(() => sent.length), (n) => n === 1)
      yield* Fiber.interrupt(fiber)
      expect(ended).toEqual([1])
    }).pipe(Effect.provide(transportOver(wire)))
  })

  it.effect("ending a stream early closes its exchange", () => {
    const { ended, wire } = scriptedWire(() => ({ status: 200 }), () => Stream.concat(bytes("a\nb\n"), Stream.never))
    return Effect.gen(function*() {
      const taken = yield* Stream.runCollect(Stream.take(lines(), 1))
      expect(taken).toEqual(["a"])
      expect(ended).toEqual([1])
    }).pipe(Effect.provide(transportOver(wire)))
  })
})

describe("per-call options (Switchboard.withRequestOptions)", () => {
  it.effect("win over the layer's configuration; an inner scope wins over an outer one; headers merge", () => {
    const { sent, wire } = scriptedWire(() => ({ status: 503 }))
    return Effect.gen(function*() {
      yield* Effect.flip(getJson().pipe(RequestOptions.withRequestOptions({ maxRetries: 0, headers: { "x-team": "a" } })))
      expect(sent).toHaveLength(1)
      expect(sent[0]!.request.headers).toMatchObject({ "x-team": "a", "x-layer": "l", authorization: `Bearer ${key}` })

      sent.length = 0
      yield* Effect.flip(
        getJson().pipe(
          RequestOptions.withRequestOptions({ headers: { "X-Call": "c" } }),
          RequestOptions.withRequestOptions({ maxRetries: 0, headers: { "x-team": "outer" } })
        )
      )
      expect(sent).toHaveLength(1)
      expect(sent[0]!.request.headers).toMatchObject({ "x-team": "outer", "x-call": "c", "x-layer": "l" })

      // Outside any scope: the layer's maxRetries (1).
      sent.length = 0
      const fiber = yield* started(Effect.flip(getJson()))
      yield* nextSleep
      yield* Fiber.join(fiber)
      expect(sent).toHaveLength(2)
    }).pipe(Effect.provide(transportOver(wire, { maxRetries: 1, headers: { "x-layer": "l" } })))
  })

  it.effect("a retry rule of the caller's replaces the standard one", () => {
    const { sent, wire } = scriptedWire((n) => n === 1 ? { status: 400 } : { status: 200, text: "{}" })
    return Effect.gen(function*() {
      const fiber = yield* started(
        getJson().pipe(RequestOptions.withRequestOptions({ retry: (error) => error._tag === "BadRequestError" }))
      )
      yield* nextSleep
      yield* Fiber.join(fiber)
      expect(sent).toHaveLength(2)
    }).pipe(Effect.provide(transportOver(wire)))
  })

  it.effect("apply to streams, and their stream limits", () => {
    const { sent, wire } = scriptedWire(() => ({ status: 200 }), () => bytes("a\n"))
    return Effect.gen(function*() {
      yield* Stream.runDrain(lines().pipe(RequestOptions.withRequestOptions({ streamIdleTimeout: "3 seconds" })))
      expect(sent[0]!.limits).toMatchObject({ idleMillis: 3000 })
    }).pipe(Effect.provide(transportOver(wire)))
  })

  it.effect("cannot replace authorization, and a bad option is a ConfigurationError naming it; nothing is sent", () => {
    const { sent, wire } = scriptedWire(() => ({ status: 200, text: "{}" }))
    return Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [RequestOptions.RequestOptions, string]> = [
        [{ headers: { Authorization: "Bearer sk-other-secret" } }, "requestOptions.headers.authorization"],
        [{ timeout: -1 }, "requestOptions.timeout"],
        [{ maxRetries: 1.5 }, "requestOptions.maxRetries"],
        [{ headers: { "x-bad": "a\r\nb" } }, "requestOptions.headers.x-bad"]
      ]
      for (const [options, field] of cases) {
        const error = yield* Effect.flip(getJson().pipe(RequestOptions.withRequestOptions(options)))
        expect(error).toMatchObject({ _tag: "ConfigurationError", field })
        expect(JSON.stringify(error) + String(error)).not.toContain("sk-other-secret")
        expect(JSON.stringify(error) + String(error)).not.toContain(key)
        const streamed = yield* Effect.flip(Stream.runDrain(lines().pipe(RequestOptions.withRequestOptions(options))))
        expect(streamed).toMatchObject({ _tag: "ConfigurationError", field })
      }
      expect(sent).toHaveLength(0)
    }).pipe(Effect.provide(transportOver(wire)))
  })

  it.effect("a per-call secret header is redacted from what the service echoes", () => {
    const { wire } = scriptedWire(() => ({ status: 401, text: `{"error":{"message":"bad token tok-per-call-123"}}` }))
    return Effect.gen(function*() {
      const error = yield* Effect.flip(getJson().pipe(RequestOptions.withRequestOptions({ headers: { "x-api-token": "tok-per-call-123" } })))
      expect(error.message).toBe("bad token [redacted]")
    }).pipe(Effect.provide(transportOver(wire)))
  })
})

/** A tracer that keeps every span it makes. */
const recordingTracer = () => {
  const spans: Array<Tracer.Span & { ended?: Exit.Exit<unknown, unknown>; endedAfter: Array<string> }> = []
  const log: Array<string> = []
  const tracer = Tracer.make({
    span: ({ annotations, kind, links, name, parent, startTime }) => {
      const attributes = new Map<string, unknown>()
      const span: Tracer.Span & { ended?: Exit.Exit<unknown, unknown>; endedAfter: Array<string> } = {
        _tag: "Span",
        name,
        spanId: `span${spans.length}`,
        traceId: "trace",
        parent,
        annotations,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        endedAfter: [],
        end: (_endTime, exit) => {
          span.ended = exit
          span.endedAfter.push(...log)
        },
        attribute: (k, v) => void attributes.set(k, v),
        event: () => {},
        addLinks: () => {}
      }
      spans.push(span)
      return span
    }
  })
  return { spans, log, tracer }
}

describe("spans", () => {
  it.effect("a call's span is of kind client, named by the call, with its attributes and what the reply adds", () => {
    const { wire } = scriptedWire(() => ({ status: 200, text: `{"id":"r1"}` }))
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      const transport = yield* Effect.service(Transport.Transport)
      yield* transport.call({
        method: "POST",
        path: "/things",
        body: {},
        decode: (u) => Result.succeed(u as { id: string }),
        genAi: {
          operation: "chat",
          model: "m1",
          request: { "test.at_start": 1 },
          reply: (reply) => ({ attributes: { "test.reply_id": reply.id } })
        }
      })
      expect(spans).toHaveLength(1)
      expect(spans[0]).toMatchObject({ name: "chat m1", kind: "client" })
      expect(Object.fromEntries(spans[0]!.attributes)).toMatchObject({
        "test.at_start": 1,
        "gen_ai.request.model": "m1",
        "http.response.status_code": 200,
        "test.reply_id": "r1"
      })
      expect(spans[0]!.ended && Exit.isSuccess(spans[0]!.ended)).toBe(true)
    }).pipe(Effect.provide(transportOver(wire)), Effect.withTracer(tracer))
  })

  it.effect("a stream's span lives until its last element, and takes attributes as elements arrive", () => {
    const { wire } = scriptedWire(() => ({ status: 200 }), () => bytes("a\nb\nc\n"))
    const { log, spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      const counted = lines({
        decode: (body, reply) =>
          Stream.splitLines(Stream.decodeText(body)).pipe(
            Stream.filter((line) => line !== ""),
            Stream.tap((line) => Effect.sync(() => reply.span.attribute("test.last", line)))
          )
      })
      yield* Stream.runForEach(counted, (line) => Effect.sync(() => log.push(line)))
      expect(spans.map((s) => [s.name, s.kind])).toEqual([["chat lines", "client"]])
      expect(spans[0]!.endedAfter).toEqual(["a", "b", "c"])
      expect(spans[0]!.attributes.get("test.last")).toBe("c")
      expect(spans[0]!.ended && Exit.isSuccess(spans[0]!.ended)).toBe(true)
    }).pipe(Effect.provide(transportOver(wire)), Effect.withTracer(tracer))
  })

  it.effect("a stream's span ends with its failure, or its interruption", () => {
    const { wire } = scriptedWire(() => ({ status: 200 }), (n) =>
      n === 1 ? Stream.concat(bytes("a\n"), Stream.fail(new HttpWire.WireError({ reason: "response" }))) :
        Stream.concat(bytes("a\n"), Stream.never))
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      yield* Effect.flip(Stream.runDrain(lines()))
      expect(spans[0]!.ended && Exit.isFailure(spans[0]!.ended)).toBe(true)
      const fiber = yield* started(Stream.runDrain(lines()))
      yield* waitUntil(Effect.sync(() => spans.length), (n) => n === 2)
      yield* Fiber.interrupt(fiber)
      expect(spans[1]!.ended && Exit.hasInterrupts(spans[1]!.ended)).toBe(true)
    }).pipe(Effect.provide(transportOver(wire)), Effect.withTracer(tracer))
  })
})

describe("trace context", () => {
  it.effect("the wire's traceparent names the call's span, for a call and for a stream", () => {
    const traced: Array<string | undefined> = []
    const { wire: scripted } = scriptedWire(() => ({ status: 200, text: "{}" }), () => bytes("a\n"))
    // A wire that sends as every wire does: through HttpWire.traced.
    const wire: HttpWire.Service = {
      text: (request, limits) =>
        Effect.flatMap(HttpWire.traced(request), (sent) => {
          traced.push(sent.headers["traceparent"])
          return scripted.text(sent, limits)
        }),
      open: (request, limits) =>
        Effect.flatMap(HttpWire.traced(request), (sent) => {
          traced.push(sent.headers["traceparent"])
          return scripted.open(sent, limits)
        })
    }
    const { spans, tracer } = recordingTracer()
    return Effect.gen(function*() {
      yield* getJson()
      yield* Stream.runDrain(lines())
      expect(spans.map((span) => span.name)).toEqual(["list_models", "chat lines"])
      expect(traced).toEqual(spans.map((span) => `00-${span.traceId.padStart(32, "0")}-${span.spanId}-01`))
    }).pipe(Effect.provide(transportOver(wire)), Effect.withTracer(tracer))
  })
})

describe("the request", () => {
  it.effect("carries the key, and methods and JSON bodies as given", () => {
    const { sent, wire } = scriptedWire(() => ({ status: 200, text: "{}" }))
    return Effect.gen(function*() {
      const transport = yield* Effect.service(Transport.Transport)
      yield* getJson()
      yield* transport.call({
        method: "PUT",
        path: "/things/1",
        body: { name: "one" },
        decode: (u) => Result.succeed(u),
        genAi: { operation: "list_models" }
      })
      expect(sent[0]!.request).toMatchObject({ method: "GET", url: "http://127.0.0.1:9/v1/things" })
      expect(sent[0]!.request.body).toBeUndefined()
      expect(sent[0]!.request.headers["authorization"]).toBe(`Bearer ${key}`)
      expect(sent[1]!.request).toMatchObject({ method: "PUT", url: "http://127.0.0.1:9/v1/things/1", body: { _tag: "Json", text: `{"name":"one"}` } })
      expect(sent[1]!.request.headers["authorization"]).toBe(`Bearer ${key}`)
    }).pipe(Effect.provide(transportOver(wire)))
  })

  it.effect("a JSON body goes with application/json, unless the layer set its own content-type", () => {
    const post = Effect.flatMap(Effect.service(Transport.Transport), (transport) =>
      transport.call({
        method: "POST",
        path: "/things",
        body: { a: 1 },
        decode: (u) => Result.succeed(u),
        genAi: { operation: "list_models" }
      }))
    const sentType = (options: Partial<SwitchboardConfig.Options>) => {
      const { sent, wire } = scriptedWire(() => ({ status: 200, text: "{}" }))
      return Effect.map(Effect.provide(post, transportOver(wire, options)), () => {
        const { headers, payload } = HttpWire.outgoing(sent[0]!.request)
        expect(payload).toBe(`{"a":1}`)
        return headers["content-type"]
      })
    }
    return Effect.gen(function*() {
      expect(yield* sentType({})).toBe("application/json")
      expect(yield* sentType({ headers: { "Content-Type": "application/vnd.switchboard+json" } })).toBe(
        "application/vnd.switchboard+json"
      )
    })
  })
})
