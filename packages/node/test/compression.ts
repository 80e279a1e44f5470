/**
 * Compressed replies (issue 27), the same cases for every wire: a raw
 * `node:http` server on 127.0.0.1 that codes its replies with `node:zlib`
 * (gzip, br, deflate zlib-wrapped and raw, stacked), pours bombs, and sends
 * what no wire can decode. Each wire's test file runs `compressionSuite`
 * with a layer of the SDK over that wire.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol, type SwitchboardConfig } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Zlib from "node:zlib"

const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } satisfies Protocol.ChatRequest
const MiB = 1024 * 1024
const GiB = 1024 * MiB

export type Coding = "gzip" | "br" | "deflate" | "deflate-raw"

/** A coder for `coding`, and the `content-encoding` it is sent as. */
const coder = (coding: Coding, options: Zlib.ZlibOptions = {}): { readonly stream: Zlib.Gzip | Zlib.BrotliCompress | Zlib.Deflate; readonly name: string } =>
  coding === "gzip" ?
    { stream: Zlib.createGzip(options), name: "gzip" } :
    coding === "br" ?
    { stream: Zlib.createBrotliCompress(), name: "br" } :
    coding === "deflate" ?
    { stream: Zlib.createDeflate(options), name: "deflate" } :
    { stream: Zlib.createDeflateRaw(options), name: "deflate" }

const encodeSync = (coding: Coding, bytes: Buffer, options: Zlib.ZlibOptions = {}): Buffer =>
  coding === "gzip" ?
    Zlib.gzipSync(bytes, options) :
    coding === "br" ?
    Zlib.brotliCompressSync(bytes) :
    coding === "deflate" ?
    Zlib.deflateSync(bytes, options) :
    Zlib.deflateRawSync(bytes, options)

type Handler = (request: Http.IncomingMessage, response: Http.ServerResponse, body: string) => void

interface Server {
  readonly url: string
  /** Headers of the requests received so far. */
  readonly requests: Array<Http.IncomingHttpHeaders>
}

/** A loopback server answering with `handler` for the scope's lifetime; every socket is destroyed with it. */
const serve = (handler: Handler): Effect.Effect<Server, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Http.Server; readonly url: string; readonly requests: Array<Http.IncomingHttpHeaders> }>(
      (resume) => {
        const requests: Array<Http.IncomingHttpHeaders> = []
        const server = Http.createServer((request, response) => {
          requests.push(request.headers)
          const parts: Array<Buffer> = []
          request.on("data", (part: Buffer) => parts.push(part))
          request.on("end", () => handler(request, response, Buffer.concat(parts).toString()))
        })
        server.listen(0, "127.0.0.1", () =>
          resume(Effect.succeed({ server, url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`, requests })))
      }
    ),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const completion = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "squeezed hello" }, finish_reason: "stop" }]
}

const chunkOf = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`

/** A whole reply coded at once, with the coded length. */
const coded = (response: Http.ServerResponse, status: number, body: string, coding: Coding | string, contentType = "application/json") => {
  const bytes = coding === "gzip" || coding === "br" || coding === "deflate" || coding === "deflate-raw" ?
    encodeSync(coding, Buffer.from(body)) :
    Buffer.from(body)
  const name = coding === "deflate-raw" ? "deflate" : coding
  response.writeHead(status, { "content-type": contentType, "content-encoding": name, "content-length": bytes.length })
  response.end(bytes)
}

/**
 * Pours `total` bytes of `fill` (after `prefix`) through `coding`, as fast as
 * the client reads, stopping when it goes; returns how many plain bytes went in.
 */
const pourCoded = (response: Http.ServerResponse, coding: Coding, total: number, prefix = "", fill = "x") => {
  const { stream } = coder(coding, { level: 1 })
  stream.pipe(response)
  response.on("close", () => stream.destroy())
  const piece = Buffer.alloc(MiB, fill)
  let written = 0
  const next = () => {
    while (written < total && !response.destroyed && !stream.destroyed) {
      written += piece.length
      if (!stream.write(piece)) return stream.once("drain", next)
    }
    if (written >= total) stream.end()
  }
  stream.write(prefix)
  next()
  return () => written
}

/**
 * Samples the process's resident memory while `effect` runs: the most it
 * grew above where it started.
 */
const peakGrowth = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const start = process.memoryUsage().rss
    let peak = start
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 5)
    return Effect.map(
      Effect.ensuring(effect, Effect.sync(() => clearInterval(timer))),
      (a) => ({ result: a, growth: Math.max(peak, process.memoryUsage().rss) - start })
    )
  })

/** What the cases' calls need. */
type Needs = Effect.Services<ReturnType<typeof Chat.create>> | Stream.Services<ReturnType<typeof Chat.stream>>

export type LayerFor = (url: string, options: Partial<SwitchboardConfig.Options>) => Layer.Layer<Needs, unknown>

/** The cases, for the wire the layer stands on. */
export const compressionSuite = (wire: string, layerFor: LayerFor, facts: { readonly setsAcceptEncoding: boolean } = { setsAcceptEncoding: true }) => {
  const against = <A, E>(
    handler: Handler,
    use: (server: Server) => Effect.Effect<A, E, Needs>,
    options: Partial<SwitchboardConfig.Options> = {}
  ) =>
    Effect.scoped(Effect.flatMap(serve(handler), (server) =>
      Effect.provide(use(server), Layer.orDie(layerFor(server.url, { maxRetries: 0, ...options })))))

  describe(`compressed replies over ${wire}`, () => {
    for (const coding of ["gzip", "br", "deflate", "deflate-raw"] as const) {
      it.live(`${coding}: a JSON 200 decodes, and the request says which codings it takes`, () =>
        against(
          (_request, response) => coded(response, 200, JSON.stringify(completion), coding),
          (server) =>
            Effect.gen(function*() {
              const reply = yield* Chat.create(hello)
              expect(reply.choices[0]?.message.content).toBe("squeezed hello")
              const accept = server.requests[0]?.["accept-encoding"] ?? ""
              if (facts.setsAcceptEncoding) expect(accept).toBe("gzip, deflate, br")
              else expect(accept).toContain("gzip")
            })
        ))

      it.live(`${coding}: a 400's coded body gives the service's message`, () =>
        against(
          (_request, response) => coded(response, 400, JSON.stringify({ error: { message: "temperature is too hot", type: "invalid_request_error" } }), coding),
          () =>
            Effect.gen(function*() {
              const error = yield* Effect.flip(Chat.create(hello))
              expect(error).toMatchObject({ _tag: "BadRequestError", status: 400, message: "temperature is too hot" })
            })
        ))

      it.live(`${coding}: a stream's events arrive as they are flushed, not after the whole body`, () => {
        let released = false
        let release = () => {}
        return against(
          (_request, response) => {
            response.writeHead(200, { "content-type": "text/event-stream", "content-encoding": coding === "deflate-raw" ? "deflate" : coding })
            const { stream } = coder(coding)
            stream.pipe(response)
            stream.write(chunkOf("first "))
            stream.flush(coding === "br" ? Zlib.constants.BROTLI_OPERATION_FLUSH : Zlib.constants.Z_SYNC_FLUSH)
            // The rest waits for the test, which asks once the first event is in.
            const timer = setTimeout(() => release(), 10_000)
            release = () => {
              clearTimeout(timer)
              stream.end(chunkOf("second", "stop") + "data: [DONE]\n\n")
            }
          },
          () =>
            Effect.gen(function*() {
              const seen: Array<string> = []
              yield* Stream.runForEach(Chat.streamText(hello), (text) =>
                Effect.sync(() => {
                  if (seen.length === 0) {
                    expect(released).toBe(false)
                    released = true
                    release()
                  }
                  seen.push(text)
                }))
              expect(seen.join("")).toBe("first second")
            })
        )
      })
    }

    it.live("identity, and gzip stacked on br, decode", () =>
      Effect.gen(function*() {
        yield* against((_request, response) => coded(response, 200, JSON.stringify(completion), "identity"), () =>
          Effect.map(Chat.create(hello), (reply) => expect(reply.choices[0]?.message.content).toBe("squeezed hello")))
        yield* against(
          (_request, response) => {
            const bytes = Zlib.gzipSync(Zlib.brotliCompressSync(Buffer.from(JSON.stringify(completion))))
            response.writeHead(200, { "content-type": "application/json", "content-encoding": "br, gzip" })
            response.end(bytes)
          },
          () => Effect.map(Chat.create(hello), (reply) => expect(reply.choices[0]?.message.content).toBe("squeezed hello"))
        )
      }))

    it.live("a coding the wire does not take, on a 200, a stream and a 400: typed, never the coded bytes", () => {
      let status = 200
      return against(
        (_request, response, body) => {
          const stream = body.includes(`"stream":true`)
          response.writeHead(status, { "content-type": stream ? "text/event-stream" : "application/json", "content-encoding": "compress" })
          response.end(Buffer.from([0x1f, 0x9d, 0x90, 0x7b, 0x22, 0x00, 0x01]))
        },
        () =>
          Effect.gen(function*() {
            const call = yield* Effect.flip(Chat.create(hello))
            expect(call).toMatchObject({ _tag: "ResponseDecodeError" })
            expect(call.message).toContain(`"compress"`)
            const stream = yield* Effect.flip(Stream.runDrain(Chat.stream(hello)))
            expect(stream).toMatchObject({ _tag: "ResponseDecodeError" })
            status = 400
            const failed = yield* Effect.flip(Chat.create(hello))
            expect(failed).toMatchObject({ _tag: "BadRequestError", status: 400 })
            expect([...failed.message].every((c) => c >= " ")).toBe(true)
          })
      )
    })

    it.live("a corrupt or cut gzip body fails typed", () =>
      Effect.gen(function*() {
        const whole = Zlib.gzipSync(Buffer.from(JSON.stringify(completion)))
        const corrupt = Buffer.from(whole)
        corrupt.fill(0x55, 10, 30)
        // fetch takes a cut gzip body as far as it goes (as browsers do): JSON cut short, typed all the same.
        for (const [bytes, says] of [[corrupt, /coded body is corrupt/], [whole.subarray(0, whole.length - 12), /coded body is corrupt|not JSON/]] as const) {
          const error = yield* against(
            (_request, response) => {
              response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
              response.end(bytes)
            },
            () => Effect.flip(Chat.create(hello))
          )
          expect(error).toMatchObject({ _tag: "ResponseDecodeError" })
          expect(error.message).toMatch(says)
        }
      }))

    it.live("the limit counts decoded bytes: a coded length under it does not pass a body over it, and one over it does not refuse a body under it", () =>
      Effect.gen(function*() {
        const big = JSON.stringify({ ...completion, pad: "x".repeat(200_000) })
        const over = yield* against(
          (_request, response) => coded(response, 200, big, "gzip"),
          () => Effect.flip(Chat.create(hello)),
          { maxResponseBytes: 100_000 }
        )
        expect(over).toMatchObject({ _tag: "ResponseTooLargeError", limit: 100_000 })
        // Stored (level 0): the coded length is a little more than the body's.
        const body = Buffer.from(JSON.stringify(completion))
        const stored = Zlib.gzipSync(body, { level: 0 })
        expect(stored.length).toBeGreaterThan(body.length)
        const reply = yield* against(
          (_request, response) => {
            response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": stored.length })
            response.end(stored)
          },
          () => Chat.create(hello),
          { maxResponseBytes: body.length }
        )
        expect(reply.choices[0]?.message.content).toBe("squeezed hello")
      }))

    describe("a gzip bomb (1 GiB of x) ends typed at the limit, with memory far below the bomb", () => {
      it.live("on a 200", () => {
        let written = () => 0
        return against(
          (_request, response) => {
            response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
            written = pourCoded(response, "gzip", GiB)
          },
          () =>
            Effect.gen(function*() {
              const { growth, result } = yield* peakGrowth(Effect.flip(Chat.create(hello)))
              expect(result).toMatchObject({ _tag: "ResponseTooLargeError", limit: 4 * MiB })
              expect(growth).toBeLessThan(256 * MiB)
              expect(written()).toBeLessThan(GiB)
            }),
          { maxResponseBytes: 4 * MiB }
        )
      })

      it.live("on a stream", () => {
        let written = () => 0
        return against(
          (_request, response) => {
            response.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" })
            written = pourCoded(response, "gzip", GiB, "data: ")
          },
          () =>
            Effect.gen(function*() {
              const { growth, result } = yield* peakGrowth(Effect.flip(Stream.runDrain(Chat.stream(hello))))
              expect(result).toMatchObject({ _tag: "ResponseTooLargeError", limit: 16 * MiB })
              expect(growth).toBeLessThan(384 * MiB)
              expect(written()).toBeLessThan(GiB)
            })
        )
      })

      it.live("on a stream of one event made of short data lines", () => {
        // Each line is a few characters of the event's data but a string of
        // its own in the parser: counted by data alone, 16 Mi characters held
        // more than 500 MB. (The coded gigabyte is about 1 MB: all of it is sent.)
        return against(
          (_request, response) => {
            response.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" })
            pourCoded(response, "gzip", GiB, "", "data: a\n")
          },
          () =>
            Effect.gen(function*() {
              const { growth, result } = yield* peakGrowth(Effect.flip(Stream.runDrain(Chat.stream(hello))))
              expect(result).toMatchObject({ _tag: "ResponseTooLargeError", limit: 16 * MiB })
              expect(growth).toBeLessThan(384 * MiB)
            })
        )
      })

      it.live("on a 400's body", () => {
        let written = () => 0
        return against(
          (_request, response) => {
            response.writeHead(400, { "content-type": "application/json", "content-encoding": "gzip" })
            written = pourCoded(response, "gzip", GiB, `{"error":{"message":"bad"},"pad":"`)
          },
          () =>
            Effect.gen(function*() {
              const { growth, result } = yield* peakGrowth(Effect.flip(Chat.create(hello)))
              expect(result).toMatchObject({ _tag: "BadRequestError", status: 400 })
              expect(growth).toBeLessThan(256 * MiB)
              expect(written()).toBeLessThan(GiB)
            })
        )
      })
    })
  })
}
