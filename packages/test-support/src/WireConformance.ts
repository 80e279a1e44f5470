/**
 * One contract for every `HttpWire` (`HttpClientWire` over any client,
 * `NodeHttpWire`, `BrowserHttpWire`): `suite(name, layer)` registers the
 * same tests for a wire, against a real `node:http` server on 127.0.0.1 —
 * statuses and headers, bodies read whole and streamed, the size limits
 * (counted decoded, `content-length`, error bodies cut), compression, the
 * time limits, aborting, connection failures and `traceparent`.
 *
 * Time limits are the wire's own timers on the live clock: a limit that
 * must fire waits on a server that never answers (so no test depends on
 * how fast the machine is), one that must not fire is long. The tests never
 * sleep and never assert a time. (What the limits do between reads, e.g. a
 * slow reader is not idle, is `WireLimits`' own test, on a scripted clock.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpWire from "@switchboard/core/HttpWire"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import type * as Http from "node:http"
import * as Zlib from "node:zlib"
import { type Handler, serve } from "./Hostile.js"

export interface Options {
  /**
   * Whether the wire chooses `accept-encoding` itself (a browser does):
   * then the suite does not check the header it sends.
   */
  readonly ownAcceptEncoding?: boolean | undefined
}

/** The wire of the layer, for one test. */
const wireOf = Effect.service(HttpWire.HttpWire)

/** A server for the test's scope, and the headers of the requests it got. */
const server = (handler: Handler) =>
  Effect.map(
    Effect.sync(() => [] as Array<Http.IncomingHttpHeaders>),
    (heads) => ({ heads, handler })
  ).pipe(Effect.flatMap(({ handler, heads }) =>
    Effect.map(serve((request, response, body) => {
      heads.push(request.headers)
      handler(request, response, body)
    }), (hostile) => ({ ...hostile, heads }))
  ))

const get = (url: string, headers: Record<string, string> = {}): HttpWire.Request => ({ method: "GET", url, headers })

/** Every byte of an opened body, as text. */
const readAll = (response: HttpWire.OpenResponse) =>
  Effect.map(Stream.runCollect(response.body), (parts) => Buffer.concat(parts).toString())

/** A never-ending reply: the head, then nothing. */
const headOnly = (response: Http.ServerResponse) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  response.flushHeaders()
}

/** Resolves `deferred` when the server sees the exchange closed from the client's side. */
const onClosed = (request: Http.IncomingMessage, response: Http.ServerResponse, closed: Deferred.Deferred<void>) => {
  const done = () => Deferred.doneUnsafe(closed, Exit.void)
  response.once("close", done)
  request.once("close", () => {
    if (request.destroyed) done()
  })
}

const coded = (coding: "gzip" | "deflate" | "br", text: string) =>
  coding === "gzip" ? Zlib.gzipSync(text) : coding === "br" ? Zlib.brotliCompressSync(text) : Zlib.deflateSync(text)

/**
 * Registers the conformance tests of the wire `layer` makes.
 */
export const suite = (name: string, layer: Layer.Layer<HttpWire.HttpWire, unknown>, options: Options = {}) =>
  describe(`HttpWire conformance: ${name}`, () => {
    const test = (title: string, body: () => Effect.Effect<void, unknown, HttpWire.HttpWire | Scope.Scope>) =>
      it.live(title, () => Effect.provide(body(), layer), 20_000)

    // -----------------------------------------------------------------------
    // Statuses, headers, bodies
    // -----------------------------------------------------------------------

    test("a whole reply: status, headers in lower case (repeated ones joined), text", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => {
          response.setHeader("X-Request-Id", "req_1")
          response.setHeader("X-Many", ["a", "b"])
          response.writeHead(201, { "Content-Type": "application/json" })
          response.end(`{"ok":true}`)
        })
        const reply = yield* wire.text(get(url))
        expect(reply.status).toBe(201)
        expect(reply.headers["x-request-id"]).toBe("req_1")
        expect(reply.headers["x-many"]).toBe("a, b")
        expect(reply.headers["content-type"]).toBe("application/json")
        expect(reply.text).toBe(`{"ok":true}`)
      }))

    test("every status outside 2xx is a reply with its status and body, not a failure", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        for (const status of [301, 400, 404, 429, 500, 503]) {
          const { url } = yield* server((_request, response) => {
            response.writeHead(status, { "content-type": "application/json" })
            response.end(`{"error":{"message":"status ${status}"}}`)
          })
          const reply = yield* wire.text(get(url))
          expect(reply.status).toBe(status)
          expect(reply.text).toBe(`{"error":{"message":"status ${status}"}}`)
        }
      }))

    // A redirect is never followed (docs/errors-and-retries.md): following one
    // would hand the request's secret headers and body to whatever host it names.
    test("a redirect (301, 302, 303, 307, 308), to another origin or the same, is handed on, never followed", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const elsewhere = yield* server((_request, response) => response.end(`{"from":"elsewhere"}`))
        for (const status of [301, 302, 303, 307, 308]) {
          for (const target of ["other origin", "same origin"] as const) {
            const asked: Array<string> = []
            const here = yield* server((request, response) => {
              asked.push(request.url ?? "")
              if (request.url !== "/v1/chat/completions") return void response.end(`{"from":"moved"}`)
              const location = target === "other origin" ? `${elsewhere.url}/v1/chat/completions` : "/moved"
              response.writeHead(status, { "content-type": "application/json", location })
              response.end(`{"error":{"message":"moved"}}`)
            })
            const request = {
              method: "POST" as const,
              url: `${here.url}/v1/chat/completions`,
              headers: { "x-api-key": "sk-secret-header", authorization: "Bearer sk-secret" },
              body: HttpWire.json(`{"prompt":"private"}`)
            }
            const reply = yield* wire.text(request)
            const opened = yield* Effect.scoped(Effect.map(wire.open(request), ({ headers, status }) => ({ headers, status })))
            for (const head of [reply, opened]) {
              expect(head.status, `${status} to the ${target}`).toBe(status)
              expect(head.headers["location"]).toBe(target === "other origin" ? `${elsewhere.url}/v1/chat/completions` : "/moved")
            }
            expect(asked, `${status} to the ${target}`).toEqual(["/v1/chat/completions", "/v1/chat/completions"])
          }
        }
        expect(elsewhere.requests()).toBe(0)
      }))

    test("the request goes as given: method, headers, JSON body with its content-type, accept-encoding", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { bodies, heads, url } = yield* server((_request, response) => response.end("{}"))
        yield* wire.text({ method: "POST", url, headers: { "x-team": "a", authorization: "Bearer k" }, body: HttpWire.json(`{"a":1}`) })
        expect(bodies).toEqual([`{"a":1}`])
        expect(heads[0]).toMatchObject({ "x-team": "a", authorization: "Bearer k", "content-type": "application/json" })
        if (!options.ownAcceptEncoding) expect(heads[0]!["accept-encoding"]).toMatch(/gzip/)
      }))

    // `Transport` times a JSON call's first byte by `onHead` (ResponseMetadata's
    // `timings.firstByte`): the head must be reported as it arrives, not when
    // the body is whole. The server holds the body until the wire has said so,
    // so the order is the verdict, not a time.
    test("text: onHead is called once as the head arrives, before the body (held back until then), whatever the status", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        for (const status of [200, 429]) {
          const events: Array<string> = []
          const headSeen = yield* Deferred.make<void>()
          const body = `{"status":${status}}`
          let release = () => {}
          const { url } = yield* server((_request, response) => {
            response.writeHead(status, { "content-type": "application/json", "content-length": String(body.length) })
            response.flushHeaders()
            release = () => {
              events.push("body sent")
              response.end(body)
            }
          })
          const onHead = () => {
            events.push("head")
            Deferred.doneUnsafe(headSeen, Exit.void)
          }
          const fiber = yield* Effect.forkChild(wire.text(get(url), undefined, onHead))
          yield* Deferred.await(headSeen)
          release()
          const reply = yield* Fiber.join(fiber)
          expect(reply).toMatchObject({ status, text: body })
          expect(events).toEqual(["head", "body sent"])
        }
      }))

    test("text: no head, no onHead (a refused connection)", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* Effect.scoped(server(() => {}))
        let heads = 0
        yield* Effect.flip(wire.text(get(url), undefined, () => void heads++))
        expect(heads).toBe(0)
      }))

    test("a caller's content-type stays", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { heads, url } = yield* server((_request, response) => response.end("{}"))
        yield* wire.text({ method: "POST", url, headers: { "content-type": "application/vnd.x+json" }, body: HttpWire.json("{}") })
        expect(heads[0]!["content-type"]).toBe("application/vnd.x+json")
      }))

    // -----------------------------------------------------------------------
    // Size limits
    // -----------------------------------------------------------------------

    test("a 2xx body past maxBytes is too-large; one at the limit is read", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => {
          response.writeHead(200, { "content-type": "application/json" })
          // Chunked: no content-length says the size.
          response.write("x".repeat(600))
          response.end("x".repeat(600))
        })
        const error = yield* Effect.flip(wire.text(get(url), { maxBytes: 1000 }))
        expect(error).toMatchObject({ _tag: "WireError", reason: "too-large" })
        const reply = yield* wire.text(get(url), { maxBytes: 1200 })
        expect(reply.text.length).toBe(1200)
      }))

    test("a 2xx whose content-length is past maxBytes fails at the head, without waiting for a body", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => {
          response.writeHead(200, { "content-type": "application/json", "content-length": String(10 * 1024 * 1024) })
          response.write("{")
          // …and nothing more: only the header can end this.
        })
        const error = yield* Effect.flip(wire.text(get(url), { maxBytes: 1000 }))
        expect(error).toMatchObject({ _tag: "WireError", reason: "too-large" })
      }))

    test("an error body is cut at maxErrorBytes, whatever maxBytes says", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => {
          response.writeHead(500, { "content-type": "text/plain" })
          response.write("e".repeat(HttpWire.maxErrorBytes))
          response.write("e".repeat(1000))
          // …and never ends: the wire stops reading at the limit.
        })
        const reply = yield* wire.text(get(url), { maxBytes: 10 })
        expect(reply.status).toBe(500)
        expect(reply.text.length).toBe(HttpWire.maxErrorBytes)
      }))

    // -----------------------------------------------------------------------
    // Compression
    // -----------------------------------------------------------------------

    test("gzip, deflate and br replies are decoded, whole and streamed", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        for (const coding of ["gzip", "deflate", "br"] as const) {
          const { url } = yield* server((_request, response) => {
            response.writeHead(200, { "content-type": "text/plain", "content-encoding": coding })
            response.end(coded(coding, `squeezed by ${coding}`))
          })
          expect((yield* wire.text(get(url))).text).toBe(`squeezed by ${coding}`)
          const opened = yield* wire.open(get(url))
          expect(yield* readAll(opened)).toBe(`squeezed by ${coding}`)
        }
      }))

    // One rule for a list (RFC 9110): applied in the order listed, names in any
    // case and spacing, `identity` nothing, `x-gzip` gzip. fetch undoes a list
    // only when it takes every name in it, else hands on the coded bytes: the
    // wire then undoes them itself (issue 33, case 9).
    test("content-encoding lists: identity is nothing, x-gzip is gzip, any case or spacing, whole and streamed", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const text = `{"coded":"a list"}`
        const cases: ReadonlyArray<readonly [string, Buffer]> = [
          ["identity, gzip", Zlib.gzipSync(text)],
          ["gzip, identity", Zlib.gzipSync(text)],
          ["Gzip , Identity", Zlib.gzipSync(text)],
          ["GZIP", Zlib.gzipSync(text)],
          ["x-gzip", Zlib.gzipSync(text)],
          [",gzip", Zlib.gzipSync(text)],
          ["identity", Buffer.from(text)],
          ["deflate, identity", Zlib.deflateSync(text)],
          ["identity, deflate", Zlib.deflateRawSync(text)],
          ["gzip, br", Zlib.brotliCompressSync(Zlib.gzipSync(text))],
          ["identity, gzip, br", Zlib.brotliCompressSync(Zlib.gzipSync(text))]
        ]
        for (const [coding, body] of cases) {
          const { url } = yield* server((_request, response) => {
            response.writeHead(200, { "content-type": "application/json", "content-encoding": coding })
            response.end(body)
          })
          expect((yield* wire.text(get(url))).text, coding).toBe(text)
          expect(yield* Effect.scoped(Effect.flatMap(wire.open(get(url)), readAll)), coding).toBe(text)
        }
      }))

    test("a list's body counts decoded and is checked as any coded one: a bomb is too-large, a corrupt body decode", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const bomb = Zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20))
        const corrupt = Buffer.concat([Zlib.gzipSync("x".repeat(1000)).subarray(0, 20), Buffer.alloc(200, 0x41)])
        for (const [body, expected] of [[bomb, "too-large"], [corrupt, "decode"]] as const) {
          const { url } = yield* server((_request, response) => {
            response.writeHead(200, { "content-type": "application/json", "content-encoding": "identity, gzip" })
            response.end(body)
          })
          const error = yield* Effect.flip(wire.text(get(url), { maxBytes: 64 * 1024 }))
          expect(error).toMatchObject({ _tag: "WireError", reason: expected })
        }
      }))

    test("a coding no wire takes, alone or in a list, fails a 2xx with decode, naming it and never quoting the body", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        for (const coding of ["compress", "gzip, compress", "identity, x-deflate", "zstd, identity", "gzip, \u00ff\u00fe"]) {
          const { url } = yield* server((_request, response) => {
            response.writeHead(200, { "content-type": "application/json", "content-encoding": coding })
            response.end(Zlib.gzipSync(`{"secret":"never shown"}`))
          })
          const whole = yield* Effect.flip(wire.text(get(url)))
          const streamed = yield* Effect.flip(Effect.scoped(Effect.flatMap(wire.open(get(url)), readAll)))
          for (const error of [whole, streamed]) {
            expect(error, coding).toMatchObject({ _tag: "WireError", reason: "decode" })
            const message = error.cause instanceof Error ? error.cause.message : ""
            expect(message, coding).toMatch(/content-encoding/)
            // Printable text only: no byte of the body, no control or binary character.
            expect(message, coding).toMatch(/^[\x20-\x7e]*$/)
          }
        }
      }))

    test("maxBytes counts decoded bytes: a small gzip body that inflates past it is too-large", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => {
          const bomb = Zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20))
          response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": bomb.length })
          response.end(bomb)
        })
        const error = yield* Effect.flip(wire.text(get(url), { maxBytes: 64 * 1024 }))
        expect(error).toMatchObject({ _tag: "WireError", reason: "too-large" })
      }))

    test("a content-encoding no wire takes fails a 2xx with decode; an error status keeps its status", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        for (const status of [200, 503]) {
          const { url } = yield* server((_request, response) => {
            response.writeHead(status, { "content-type": "application/json", "content-encoding": "compress" })
            response.end("\u001f\u009d not really")
          })
          const result = yield* Effect.result(wire.text(get(url)))
          if (status === 200) expect(result).toMatchObject({ _tag: "Failure", failure: { reason: "decode" } })
          else expect(result).toMatchObject({ _tag: "Success", success: { status: 503 } })
        }
      }))

    // -----------------------------------------------------------------------
    // Streaming
    // -----------------------------------------------------------------------

    test("an opened body arrives as it is written, not at its end", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const more = yield* Deferred.make<void>()
        const { url } = yield* server((_request, response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.write("data: one\n\n")
          // The rest only once the client has read the first part.
          Effect.runFork(Effect.andThen(Deferred.await(more), Effect.sync(() => response.end("data: two\n\n"))))
        })
        const opened = yield* wire.open(get(url))
        expect(opened.status).toBe(200)
        expect(opened.headers["content-type"]).toBe("text/event-stream")
        const seen: Array<string> = []
        yield* Stream.runForEach(opened.body, (bytes) =>
          Effect.sync(() => {
            seen.push(Buffer.from(bytes).toString())
            Deferred.doneUnsafe(more, Exit.void)
          }))
        expect(seen.join("")).toBe("data: one\n\ndata: two\n\n")
        expect(seen[0]).toBe("data: one\n\n")
      }))

    test("an opened error status hands on its status and body", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => {
          response.writeHead(429, { "content-type": "application/json", "retry-after": "3" })
          response.end(`{"error":{"message":"slow down"}}`)
        })
        const opened = yield* wire.open(get(url))
        expect(opened.status).toBe(429)
        expect(opened.headers["retry-after"]).toBe("3")
        expect(yield* readAll(opened)).toBe(`{"error":{"message":"slow down"}}`)
      }))

    // -----------------------------------------------------------------------
    // Time limits
    // -----------------------------------------------------------------------

    test("text: a reply that never comes is a request timeout", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server(() => {})
        const error = yield* Effect.flip(wire.text(get(url), { timeoutMillis: 200 }))
        expect(error).toMatchObject({ _tag: "WireError", reason: "timeout", limit: "request" })
      }))

    test("open: a head that never comes is a first-byte timeout (or total, whichever is first)", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server(() => {})
        const first = yield* Effect.flip(wire.open(get(url), { firstByteMillis: 200, totalMillis: 60_000 }))
        expect(first).toMatchObject({ reason: "timeout", limit: "first-byte" })
        const total = yield* Effect.flip(wire.open(get(url), { firstByteMillis: 60_000, totalMillis: 200 }))
        expect(total).toMatchObject({ reason: "timeout", limit: "total" })
      }))

    test("open: a head without a body runs out the first-byte limit on the read", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => headOnly(response))
        const opened = yield* wire.open(get(url), { firstByteMillis: 200 })
        const error = yield* Effect.flip(Stream.runDrain(opened.body))
        expect(error).toMatchObject({ reason: "timeout", limit: "first-byte" })
      }))

    test("open: commit stops the first-byte limit; a silence after the first read is an idle timeout", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => {
          headOnly(response)
          response.write("data: one\n\n")
        })
        const opened = yield* wire.open(get(url), { firstByteMillis: 300, idleMillis: 1_000 })
        const seen: Array<string> = []
        const error = yield* Effect.flip(Stream.runForEach(opened.body, (bytes) =>
          Effect.sync(() => {
            seen.push(Buffer.from(bytes).toString())
            opened.commit()
          })))
        // Not first-byte (committed), though that limit is the shorter one.
        expect(error).toMatchObject({ reason: "timeout", limit: "idle" })
        expect(seen.join("")).toBe("data: one\n\n")
      }))

    test("open: a body that keeps coming runs out the total limit", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => {
          headOnly(response)
          const timer = setInterval(() => response.write("data: tick\n\n"), 20)
          response.once("close", () => clearInterval(timer))
        })
        const opened = yield* wire.open(get(url), { idleMillis: 30_000, totalMillis: 500 })
        const error = yield* Effect.flip(Stream.runForEach(opened.body, () => Effect.sync(opened.commit)))
        expect(error).toMatchObject({ reason: "timeout", limit: "total" })
      }))

    // -----------------------------------------------------------------------
    // Aborting and connection failures
    // -----------------------------------------------------------------------

    test("closing an opened exchange's scope aborts it", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const closed = yield* Deferred.make<void>()
        const { url } = yield* server((request, response) => {
          onClosed(request, response, closed)
          headOnly(response)
          response.write("data: one\n\n")
        })
        const scope = yield* Scope.make()
        const opened = yield* Scope.provide(wire.open(get(url)), scope)
        yield* Stream.runHead(opened.body)
        yield* Scope.close(scope, Exit.void)
        yield* Deferred.await(closed)
      }))

    test("interrupting text aborts the exchange", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const arrived = yield* Deferred.make<void>()
        const closed = yield* Deferred.make<void>()
        const { url } = yield* server((request, response) => {
          onClosed(request, response, closed)
          Deferred.doneUnsafe(arrived, Exit.void)
        })
        const fiber = yield* Effect.forkChild(wire.text(get(url)))
        yield* Deferred.await(arrived)
        yield* Fiber.interrupt(fiber)
        yield* Deferred.await(closed)
      }))

    test("a refused connection is a request failure", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* Effect.scoped(server(() => {}))
        // The server is gone: its port refuses.
        const error = yield* Effect.flip(wire.text(get(url)))
        expect(error).toMatchObject({ _tag: "WireError", reason: "request" })
      }))

    test("a connection lost inside the body is a response failure", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { url } = yield* server((_request, response) => {
          response.writeHead(200, { "content-type": "text/event-stream", "content-length": "1000" })
          response.write("data: one\n\n")
          setImmediate(() => response.socket?.destroy())
        })
        const text = yield* Effect.flip(wire.text(get(url)))
        expect(text).toMatchObject({ _tag: "WireError", reason: "response" })
        const opened = yield* wire.open(get(url))
        const streamed = yield* Effect.flip(Stream.runDrain(opened.body))
        expect(streamed).toMatchObject({ _tag: "WireError", reason: "response" })
      }))

    // -----------------------------------------------------------------------
    // Trace context
    // -----------------------------------------------------------------------

    test("traceparent: the current span's, on every request; none without a span or with propagation off", () =>
      Effect.gen(function*() {
        const wire = yield* wireOf
        const { heads, url } = yield* server((_request, response) => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.end("data: x\n\n")
        })
        const span = yield* Effect.withSpan(
          Effect.gen(function*() {
            yield* wire.text(get(url))
            yield* Effect.scoped(Effect.flatMap(wire.open(get(url)), readAll))
            return yield* Effect.currentSpan
          }),
          "call"
        )
        const expected = `00-${span.traceId.padStart(32, "0")}-${span.spanId}-${span.sampled ? "01" : "00"}`
        expect(heads[0]!["traceparent"]).toBe(expected)
        expect(heads[1]!["traceparent"]).toBe(expected)
        expect(heads[0]!["traceparent"]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
        yield* wire.text(get(url))
        expect(heads[2]!["traceparent"]).toBeUndefined()
        yield* Effect.withSpan(wire.text(get(url)), "quiet").pipe(Effect.provideService(Tracer.DisablePropagation, true))
        expect(heads[3]!["traceparent"]).toBeUndefined()
      }))
  })
