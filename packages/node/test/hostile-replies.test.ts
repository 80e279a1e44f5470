/**
 * Hostile replies (issue 14): every call ends typed, bounded and redacted,
 * whatever a server sends. Each server here is a `node:http` server on
 * 127.0.0.1 that stops writing once the client is gone.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, Embeddings, Images, Models, Moderations, type Protocol, ResponseMetadata, type Switchboard, type SwitchboardError, Videos } from "@switchboard/core"
import * as RecordingTracer from "@switchboard/test-support/RecordingTracer"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Formatter from "effect/Formatter"
import * as Metric from "effect/Metric"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import type * as Tracer from "effect/Tracer"
import type * as Http from "node:http"
import type * as Net from "node:net"
import * as Util from "node:util"
import { waitUntil } from "./fixtures.js"
import { expectShownValue } from "@switchboard/test-support/Hostile"
import { against, apiKey, type Handler, json, respondWith, sse } from "./hostile.js"

const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } satisfies Protocol.ChatRequest
const MiB = 1024 * 1024

/** Writes `total` bytes of `fill` in 64 KiB pieces, stopping as soon as the client goes; returns what it wrote. */
const pour = (response: Http.ServerResponse, total: number, fill = "x") => {
  const piece = Buffer.alloc(64 * 1024, fill)
  let written = 0
  const next = () => {
    while (written < total && !response.destroyed) {
      written += piece.length
      if (!response.write(piece)) return response.once("drain", next)
    }
    if (written >= total) response.end()
  }
  next()
  return () => written
}

describe("size: every byte held is bounded", () => {
  it.live("a 200 that declares 3 GiB is refused at its headers, not retried, the connection closed", () => {
    let written = () => 0
    return against(
      (_request, response) => {
        response.writeHead(200, { "content-type": "application/json", "content-length": String(3 * 1024 * MiB) })
        written = pour(response, 256 * MiB)
      },
      (server) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Chat.create(hello))
          expect(error).toMatchObject({ _tag: "ResponseTooLargeError", limit: 32 * MiB })
          expect(server.requests()).toBe(1)
          yield* waitUntil(Effect.sync(server.openSockets), (n) => n === 0)
          expect(written()).toBeLessThan(256 * MiB)
        })
    )
  })

  it.live("a 200 body without a length past maxResponseBytes: typed, not retried, the rest never read", () => {
    let written = () => 0
    return against(
      (_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        written = pour(response, 64 * MiB)
      },
      (server) =>
        Effect.gen(function*() {
          const calls: ReadonlyArray<Call> = [Chat.create(hello), Models.list, Embeddings.create({ model: "e", input: "x" })]
          for (const call of calls) {
            const before = server.requests()
            const error = yield* Effect.flip(call)
            expect(error).toMatchObject({ _tag: "ResponseTooLargeError", limit: MiB })
            expect(server.requests() - before).toBe(1)
          }
          yield* waitUntil(Effect.sync(server.openSockets), (n) => n === 0)
          expect(written()).toBeLessThan(64 * MiB)
        }),
      { maxResponseBytes: MiB }
    )
  })

  it.live("a 500 with an endless body, on a call and on a stream: the status error from its start", () => {
    const writes: Array<() => number> = []
    return against(
      (_request, response) => {
        response.writeHead(500, { "content-type": "application/json" })
        response.write(`{"error":{"message":"overloaded"},"pad":"`)
        writes.push(pour(response, 64 * MiB))
      },
      (server) =>
        Effect.gen(function*() {
          const call = yield* Effect.flip(Chat.create(hello))
          expect(call).toMatchObject({ _tag: "ServerError", status: 500 })
          const stream = yield* Effect.flip(Stream.runDrain(Chat.stream(hello)))
          expect(stream).toMatchObject({ _tag: "ServerError", status: 500 })
          expect(server.requests()).toBe(2)
          yield* waitUntil(Effect.sync(server.openSockets), (n) => n === 0)
          for (const written of writes) expect(written()).toBeLessThan(64 * MiB)
        }),
      { maxRetries: 0 }
    )
  })

  it.live("accumulate stops past its limit, content or tool arguments, and closes the stream", () =>
    Effect.gen(function*() {
      const piece = "y".repeat(1000)
      for (const delta of [{ content: piece }, { tool_calls: [{ index: 0, id: "c", function: { name: "f", arguments: piece } }] }]) {
        let sent = 0
        yield* against(
          (_request, response) => {
            response.writeHead(200, { "content-type": "text/event-stream" })
            const event = `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta }] })}\n\n`
            const timer = setInterval(() => {
              if (response.destroyed || sent >= 10_000) return clearInterval(timer)
              sent++
              response.write(event)
            }, 1)
          },
          () =>
            Effect.gen(function*() {
              const error = yield* Effect.flip(Chat.accumulate(Chat.stream(hello), { maxCharacters: 20_000 }))
              expect(error).toMatchObject({ _tag: "ResponseTooLargeError", limit: 20_000 })
            })
        )
        expect(sent).toBeLessThan(10_000)
      }
    }))
})

type Call = Effect.Effect<unknown, SwitchboardError.SwitchboardError, Switchboard.Services>

const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`

describe("depth and shape: no defect from any JSON", () => {
  it.live("replies nested 10,000 levels deep end in a ResponseDecodeError on every call", () =>
    against(
      (request, response) => {
        const d = deep(10_000)
        if (request.url === "/v1/models") return json(response, 200, `{"data":[{"id":${d}}]}`)
        if (request.url === "/v1/embeddings") return json(response, 200, `{"data":[{"embedding":${d}}]}`)
        if (request.url === "/v1/moderations") return json(response, 200, `{"results":[{"flagged":${d}}]}`)
        if (request.url === "/v1/chat/task/status") return json(response, 200, `{"status":${d}}`)
        return json(response, 200, `{"id":"x","choices":[{"message":${d}}]}`)
      },
      () =>
        Effect.gen(function*() {
          const calls: ReadonlyArray<readonly [Call, string]> = [
            [Chat.create(hello), "choices[0].message: expected an object, got an array"],
            [Models.list, "data[0].id: expected a string, got an array"],
            [Embeddings.create({ model: "e", input: "x" }), "data[0].embedding: expected an array of numbers, got an array"],
            [Moderations.create({ input: "x" }), "results[0].flagged: expected a boolean, got an array"],
            [Videos.status("t"), "status: expected a string, got an array"]
          ]
          for (const [call, reason] of calls) {
            const error = yield* Effect.flip(call)
            expect(error._tag).toBe("ResponseDecodeError")
            expect(error.message.startsWith(reason)).toBe(true)
          }
        })
    ))

  it.live("a stream chunk nested 10,000 levels deep", () =>
    against(
      (_request, response) => sse(response, `data: {"choices":[{"delta":${deep(10_000)}}]}\n\n`),
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Stream.runDrain(Chat.stream(hello)))
          expect(error._tag).toBe("ResponseDecodeError")
          expect(error.message).toMatch(/^choices\[0\]\.delta: expected an object or null, got an array/)
        })
    ))

  it.live("__proto__ in a reply never sets a prototype", () =>
    against(
      replyBody(`{"id":"x","__proto__":{"polluted":1},"choices":[{"message":{"content":"hi","\\u005f_proto__":{"isAdmin":true},"__proto__":{"isAdmin":true}}}]}`),
      () =>
        Effect.gen(function*() {
          const completion = yield* Chat.create(hello)
          const message = completion.choices[0]!.message
          expect(Object.getPrototypeOf(message)).toBe(Object.prototype)
          expect(Object.getPrototypeOf(completion)).toBe(Object.prototype)
          expect((message as { isAdmin?: unknown }).isAdmin).toBeUndefined()
          expect((completion as { polluted?: unknown }).polluted).toBeUndefined()
          expect(message.content).toBe("hi")
        })
    ))
})

describe("embedMany: every vector in its input's place, or a typed error", () => {
  /** A batch's vectors, reversed, each `[global input number]`; `shape` may break them. */
  const embeddings = (shape: (items: Array<{ index: number; embedding: Array<number> }>) => unknown, delayFirst = 0) =>
  (_request: Http.IncomingMessage, response: Http.ServerResponse, body: string) => {
    const inputs = (JSON.parse(body) as { input: Array<string> }).input
    const items = inputs.map((text, index) => ({ index, embedding: [Number(text.slice(1))] })).reverse()
    // The first batch answers last: batches finish out of order.
    setTimeout(() => json(response, 200, { data: shape(items) }), inputs[0] === "i0" ? delayFirst : 0)
  }
  const inputs = Array.from({ length: 7 }, (_, i) => `i${i}`)

  it.live("batches answered out of order, each reversed, the last one short: vector i is input i's", () =>
    against(embeddings((items) => items, 50), () =>
      Effect.gen(function*() {
        const vectors = yield* Embeddings.embedMany(inputs, { model: "e", batchSize: 3, concurrency: 3 })
        expect(vectors).toEqual(inputs.map((_, i) => [i]))
      })))

  it.live("a batch with a vector missing, one index twice, or an index past the batch", () =>
    Effect.forEach(
      [
        [(items: Array<{ index: number }>) => items.slice(1), /has 2 vectors for 3 inputs$/],
        [(items: Array<{ index: number }>) => items.map((item) => ({ ...item, index: 0 })), /has 3 vectors for 3 inputs, not one per input index/],
        [(items: Array<{ index: number }>) => items.map((item, i) => (i === 0 ? { ...item, index: 1e9 } : item)), /not one per input index/]
      ] as const,
      ([shape, message]) =>
        against(embeddings(shape), () =>
          Effect.gen(function*() {
            const error = yield* Effect.flip(Embeddings.embedMany(inputs, { model: "e", batchSize: 3 }))
            expect(error._tag).toBe("ResponseDecodeError")
            expect(error.message).toMatch(message)
          }))
    ))
})

function replyBody(body: string) {
  return (_request: Http.IncomingMessage, response: Http.ServerResponse) => json(response, 200, body)
}

describe("time: every call and stream ends", () => {  it.effect("comments are no first byte: a server that only pings fails the first-byte limit", () => {
    let pinged: () => void = () => {}
    const pings = new Promise<void>((resolve) => (pinged = resolve))
    let sent = 0
    return against(
      (_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        const timer = setInterval(() => {
          if (response.destroyed || sent > 10_000) return clearInterval(timer)
          response.write(": ping\n\n")
          if (++sent === 3) pinged()
        }, 5)
      },
      () =>
        Effect.gen(function*() {
          // The Node wire keeps the limit with a real timer (Transport.test.ts drives one with a TestClock).
          const fiber = yield* Effect.forkChild(Effect.flip(Stream.runDrain(Chat.stream(hello))))
          yield* Effect.promise(() => pings)
          const error = yield* Fiber.join(fiber)
          expect(error).toMatchObject({ _tag: "TimeoutError", phase: "first-byte" })
          expect(sent).toBeGreaterThanOrEqual(3)
        }),
      { maxRetries: 0, streamFirstByteTimeout: "300 millis", streamIdleTimeout: "1 hour" }
    )
  })

  it.effect("a stream that trickles events for ever ends at its total limit", () => {
    let events = 0
    let begun: () => void = () => {}
    const started = new Promise<void>((resolve) => (begun = resolve))
    return against(
      (_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        const event = `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { content: "." } }] })}\n\n`
        const timer = setInterval(() => {
          if (response.destroyed || events > 100_000) return clearInterval(timer)
          if (++events === 3) begun()
          response.write(event)
        }, 5)
      },
      () =>
        Effect.gen(function*() {
          // The Node wire keeps the limit with a plain timer, so it runs on real
          // time (under a TestClock too); Transport.test.ts drives it with one.
          const fiber = yield* Effect.forkChild(
            Effect.flip(Stream.runDrain(Chat.stream(hello, { totalTimeout: "300 millis", idleTimeout: "1 hour" })))
          )
          yield* Effect.promise(() => started)
          const error = yield* Fiber.join(fiber)
          expect(error).toMatchObject({ _tag: "TimeoutError", phase: "total" })
          expect(events).toBeGreaterThanOrEqual(3)
        })
    )
  })

  it.live("interrupting calls releases their request timers and connections at once", () =>
    against(
      () => {
        // never answers
      },
      (server) =>
        Effect.gen(function*() {
          const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length
          const before = timers()
          const fibers = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.forkChild(Chat.create(hello)))
          yield* waitUntil(Effect.sync(server.requests), (n) => n === 20)
          const during = timers()
          yield* Fiber.interruptAll(fibers)
          // Each call's 60 s request timer is gone the moment it is interrupted.
          expect(during - timers()).toBeGreaterThanOrEqual(20)
          expect(timers()).toBeLessThanOrEqual(before)
          yield* waitUntil(Effect.sync(server.openSockets), (n) => n === 0)
        }),
      { timeout: "60 seconds" }
    ))
})

describe("secrets: the key never appears in what the SDK surfaces", () => {
  const surfaces = (error: unknown) => [
    String(error),
    (error as Error).message,
    JSON.stringify(error),
    Util.inspect(error, { depth: 10 }),
    Formatter.format(error),
    Cause.pretty(Cause.fail(error))
  ]
  const echo = `Incorrect API key provided: ${apiKey}. You can find your API key at https://example.com.`

  it.live("echoed in a 401, a decode error, a stream error event, a task failure reason and a 400", () =>
    against(
      (request, response, body) => {
        const sent = JSON.parse(body || "{}") as { stream?: boolean; model?: string }
        if (request.url === "/v1/models") return json(response, 401, { error: { message: echo, code: apiKey } })
        if (request.url === "/v1/embeddings") return json(response, 200, { data: echo })
        if (request.url === "/v1/chat/task/status") return json(response, 200, { status: "failed", error: { message: echo } })
        if (sent.stream === true) return sse(response, `event: error\ndata: ${echo}\n\n`)
        if (sent.model === "video-1") return json(response, 200, { id: "task_1", choices: [{ message: { content: "ok" } }] })
        return json(response, 400, { detail: "bad header x-api-key: hdr-secret-0123456789" })
      },
      () =>
        Effect.gen(function*() {
          const errors = [
            yield* Effect.flip(Models.list),
            yield* Effect.flip(Embeddings.create({ model: "e", input: "x" })),
            yield* Effect.flip(Stream.runDrain(Chat.stream(hello))),
            yield* Effect.flip(Videos.generate({ model: "video-1", prompt: "a fox" }, { schedule: Schedule.forever })),
            yield* Effect.flip(Chat.create(hello))
          ]
          for (const error of errors) {
            for (const text of surfaces(error)) {
              expect(text).not.toContain(apiKey)
              expect(text).not.toContain("hdr-secret-0123456789")
            }
          }
          expect(errors.map((e) => e._tag)).toEqual([
            "AuthenticationError",
            "ResponseDecodeError",
            "StreamError",
            "TaskFailedError",
            "BadRequestError"
          ])
          expect(errors[0]!.message).toContain("Incorrect API key provided: [redacted]")
          expect(errors[2]).toMatchObject({ reason: "error-event", message: expect.stringContaining("[redacted]") })
          expect(errors[3]).toMatchObject({ reason: expect.stringContaining("[redacted]") })
          expect(errors[4]!.message).toBe("bad header x-api-key: [redacted]")
        }),
      { headers: { "x-api-key": "hdr-secret-0123456789" } }
    ))
})

describe("secrets: a key where an error's preview is cut", () => {
  // The key starts 10 characters before the cut: redacted after the cut, its start stayed.
  const across = (cut: number) => `${"x".repeat(cut - 10)}${apiKey} and more`
  const start = apiKey.slice(0, 8)
  const surfaces = (error: unknown) => [String(error), JSON.stringify(error), Util.inspect(error, { depth: 10 })]

  it.live("a status's message, a body that is not JSON, a stream's error event, a task's reason: no piece of the key", () =>
    against(
      (request, response, body) => {
        const sent = JSON.parse(body || "{}") as { stream?: boolean; model?: string; messages?: Array<{ content: string }> }
        if (request.url === "/v1/models") return json(response, 401, { error: { message: across(1000), code: across(200) } })
        if (request.url === "/v1/embeddings") return json(response, 400, across(200))
        if (request.url === "/v1/moderations") return json(response, 200, across(200))
        if (request.url === "/v1/chat/task/status") return json(response, 200, { status: "failed", error: { message: across(1000) } })
        if (sent.stream === true) return sse(response, `event: error\ndata: ${across(200)}\n\n`)
        if (sent.model === "video-1") return json(response, 200, { id: "task_1", choices: [{ message: { content: "ok" } }] })
        return json(response, 200, { error: { message: across(1000), type: across(200) } })
      },
      () =>
        Effect.gen(function*() {
          const errors = [
            yield* Effect.flip(Models.list),
            yield* Effect.flip(Embeddings.create({ model: "e", input: "x" })),
            yield* Effect.flip(Moderations.create({ input: "x" })),
            yield* Effect.flip(Stream.runDrain(Chat.stream(hello))),
            yield* Effect.flip(Videos.generate({ model: "video-1", prompt: "a fox" }, { schedule: Schedule.forever })),
            yield* Effect.flip(Chat.create(hello))
          ]
          expect(errors.map((e) => e._tag)).toEqual([
            "AuthenticationError",
            "BadRequestError",
            "ResponseDecodeError",
            "StreamError",
            "TaskFailedError",
            "ResponseDecodeError"
          ])
          for (const error of errors) for (const text of surfaces(error)) expect(text).not.toContain(start)
        })
    ))

  it.live("a streamed tool call without an id, its arguments echoing the key: accumulate's error quotes none of them", () =>
    against(
      (_request, response) => {
        const call = { index: 0, function: { name: "lookup", arguments: JSON.stringify({ key: apiKey }) } }
        sse(response, `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: "tool_calls" }] })}\n\ndata: [DONE]\n\n`)
      },
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Chat.accumulate(Chat.stream(hello)))
          expect(error).toMatchObject({ _tag: "ResponseDecodeError", message: expect.stringContaining("was streamed without an id") })
          for (const text of surfaces(error)) expect(text).not.toContain(start)
        })
    ))

  it.live("a stream's error event holds at most 1,000 characters of the service's message", () =>
    against(
      (_request, response) => sse(response, `event: error\ndata: ${JSON.stringify({ error: { message: "y".repeat(MiB), code: "z".repeat(MiB) } })}\n\n`),
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Stream.runDrain(Chat.stream(hello)))
          expect(error).toMatchObject({ _tag: "StreamError", reason: "error-event" })
          expect(error.message.length).toBeLessThan(1100)
          expect(JSON.stringify(error).length).toBeLessThan(2000)
        })
    ))
})

describe("names from a reply on spans and metrics", () => {
  const surfaces = (error: unknown) => [String(error), JSON.stringify(error), Util.inspect(error, { depth: 10 })]

  it.live("a reply whose id, model, finish reason and x-request-id echo the key: redacted on spans, metrics, metadata and errors", () => {
    const spans: Array<Tracer.Span> = []
    const echo = `x-${apiKey}`
    return against(
      (request, response, body) => {
        response.setHeader("x-request-id", echo)
        if (request.url === "/v1/embeddings") return json(response, 200, { model: echo, data: [{ index: 0, embedding: [1] }] })
        const sent = JSON.parse(body) as { stream?: boolean; model: string }
        if (sent.stream === true) {
          const chunk = { id: echo, model: echo, choices: [{ index: 0, delta: { content: "hi" }, finish_reason: sent.model === "cut" ? null : echo }] }
          return sse(response, `data: ${JSON.stringify(chunk)}\n\n${sent.model === "cut" ? "" : "data: [DONE]\n\n"}`)
        }
        json(response, 200, { id: echo, model: echo, choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: echo }] })
      },
      () =>
        Effect.gen(function*() {
          const tracer = yield* RecordingTracer.make(spans)
          const [metrics, metadata, cut] = yield* Effect.gen(function*() {
            const [, metadata] = yield* ResponseMetadata.withResponse(Chat.create(hello))
            yield* Stream.runDrain(Chat.stream(hello))
            yield* Embeddings.create({ model: "e", input: "x" })
            const cut = yield* Effect.flip(Stream.runDrain(Chat.stream({ ...hello, model: "cut" })))
            return [yield* Metric.snapshot, metadata, cut] as const
          }).pipe(Effect.withTracer(tracer), Effect.provideService(Metric.MetricRegistry, new Map()))
          expect(cut).toMatchObject({ _tag: "StreamError", reason: "cut" })
          const texts = [
            ...spans.map((span) => Formatter.format(Object.fromEntries(span.attributes))),
            ...metrics.map((metric) => Formatter.format(metric.attributes)),
            Formatter.format(metadata),
            ...surfaces(cut)
          ]
          expect(spans.length).toBe(4)
          expect(texts.join("\n")).toContain("[redacted]")
          for (const text of texts) expect(text).not.toContain(apiKey)
        })
    )
  })

  it.live("an id and a model of 1 MiB, 10,000 choices: the span and the metrics hold a bounded part", () => {
    const spans: Array<Tracer.Span> = []
    const long = "m".repeat(MiB)
    const choices = Array.from({ length: 10_000 }, (_, index) => ({ index, message: { role: "assistant", content: "" }, finish_reason: "stop" }))
    return against(
      (_request, response) => json(response, 200, { id: long, model: long, choices }),
      () =>
        Effect.gen(function*() {
          const tracer = yield* RecordingTracer.make(spans)
          const metrics = yield* Effect.andThen(Chat.create(hello), Metric.snapshot).pipe(
            Effect.withTracer(tracer),
            Effect.provideService(Metric.MetricRegistry, new Map())
          )
          const attributes = Object.fromEntries(spans[0]!.attributes)
          expect(String(attributes["gen_ai.response.id"]).length).toBeLessThan(1100)
          expect(String(attributes["gen_ai.response.model"]).length).toBeLessThan(1100)
          expect((attributes["gen_ai.response.finish_reasons"] as Array<string>).length).toBeLessThanOrEqual(4096)
          for (const metric of metrics) expect(String(metric.attributes?.["gen_ai.response.model"] ?? "").length).toBeLessThan(1100)
        })
    )
  })

  it.live("a new model name in every reply: the metrics keep a bounded number of series", () =>
    against(
      (_request, response, body) => {
        const n = (JSON.parse(body) as { messages: Array<{ content: string }> }).messages[0]!.content
        json(response, 200, { id: "c", model: `model-${n}`, choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] })
      },
      () =>
        Effect.gen(function*() {
          const metrics = yield* Effect.gen(function*() {
            yield* Effect.forEach(
              Array.from({ length: 300 }, (_, i) => i),
              (i) => Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: String(i) }] }),
              { concurrency: 8, discard: true }
            )
            return yield* Metric.snapshot
          }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
          const models = new Set(metrics.map((metric) => metric.attributes?.["gen_ai.response.model"]))
          // Each reply was counted, under its model or, past the first ones, under `_OTHER`.
          const calls = metrics.filter((metric) => metric.id === "gen_ai.client.operation.duration")
            .reduce((sum, metric) => sum + (metric.state as { readonly count: number }).count, 0)
          expect(calls).toBe(300)
          expect(models.has("_OTHER")).toBe(true)
          expect(models.size).toBeLessThanOrEqual(65)
        })
    ))
})

describe("a task that reports its progress for ever", () => {
  it.effect("a status echoing the key, 1 MiB long: the poll ends at its deadline, the status bounded and redacted", () => {
    const status = `rendering ${apiKey} ${"z".repeat(MiB)}`
    return against(
      (_request, response) => json(response, 200, { status, progress: 1e308 }),
      () =>
        Effect.gen(function*() {
          const first = yield* Deferred.make<void>()
          const fiber = yield* Effect.forkChild(Effect.flip(Stream.runDrain(
            Videos.poll("task_1", { deadline: "1 minute", schedule: Schedule.spaced("10 seconds") }).pipe(
              Stream.tap(() => Deferred.succeed(first, undefined))
            )
          )))
          yield* Deferred.await(first)
          // Past the deadline: the poll ends, whatever the status calls in between.
          yield* TestClock.adjust("2 minutes")
          const error = yield* Fiber.join(fiber)
          expect(error._tag).toBe("TaskTimeoutError")
          const lastStatus = (error as SwitchboardError.TaskTimeoutError).lastStatus ?? ""
          expect(lastStatus).toContain("rendering [redacted]")
          expect(lastStatus.length).toBeLessThan(300)
          expect(Util.inspect(error, { depth: 10 })).not.toContain(apiKey)
          const update = yield* Videos.status("task_1")
          expect(update).toMatchObject({ _tag: "InProgress", status: expect.stringContaining("rendering [redacted]") })
        })
    )
  })
})

describe("a task's video_url that is not a URL", () => {
  it.live("1 MiB of host and a space at its end: a ResponseDecodeError at once (the check was quadratic: minutes, the event loop held)", () =>
    against(
      (_request, response) => json(response, 200, { status: "succeed", video_url: `https://${"a".repeat(MiB)} ` }),
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Videos.status("task_1"))
          expect(error).toMatchObject({ _tag: "ResponseDecodeError", message: "task task_1 succeeded with a video_url that is not an http(s) URL" })
        })
    ))
})

describe("an image reply without an image", () => {
  const reply = (content: string) => (_request: Http.IncomingMessage, response: Http.ServerResponse) =>
    json(response, 200, { id: "x", choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }] })

  it.live("1 MiB of markdown openings sharing one far `)`: read in linear time (it held the event loop for minutes)", () =>
    against(reply(`${"![](".repeat(MiB / 4)} x y)`), () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Images.generate({ prompt: "a fox" }))
        expect(error._tag).toBe("NoImageInResponseError")
      })))

  it.live("a refusal echoing the key, 1 MiB long: the error's content redacted, its first 4,000 characters", () =>
    against(reply(`I cannot draw with ${apiKey}. ${"z".repeat(MiB)}`), () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Images.generate({ prompt: "a fox" }))
        expect(error._tag).toBe("NoImageInResponseError")
        const content = (error as Images.ImagesError & { readonly content: string }).content
        expect(content.startsWith("I cannot draw with [redacted]. zzz")).toBe(true)
        expect(content.length).toBeLessThan(4100)
        expect(Util.inspect(error, { depth: 10 })).not.toContain(apiKey)
      })))
})

describe("a status the contract does not list", () => {
  it.live("103 Early Hints before the reply: the reply is read, on a call and on a stream", () =>
    against(
      (_request, response, body) => {
        const stream = body.includes(`"stream":true`)
        const text = stream ?
          `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n` :
          JSON.stringify({ id: "x", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] })
        const type = stream ? "text/event-stream" : "application/json"
        ;(response.socket as Net.Socket).write(
          `HTTP/1.1 103 Early Hints\r\nlink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
        )
      },
      () =>
        Effect.gen(function*() {
          const [completion, metadata] = yield* ResponseMetadata.withResponse(Chat.create(hello))
          expect(completion.choices[0]?.message.content).toBe("hi")
          expect(metadata.status).toBe(200)
          const chunks = yield* Stream.runCollect(Chat.stream(hello))
          expect(chunks.map((chunk) => chunk.choices[0]?.delta.content)).toEqual(["hi"])
        }),
      { maxRetries: 0 }
    ))
})

describe("Chat.createObject: a value that does not decode", () => {
  const reply = respondWith

  it.live("echoing the key, 1 MiB long: the error's text redacted, its first 4,000 characters", () =>
    against(reply(JSON.stringify({ a: apiKey, pad: "p".repeat(MiB) })), () =>
      Effect.gen(function*() {
        expectShownValue(yield* Effect.flip(Chat.createObject(hello, Schema.Struct({ a: Schema.Number }))), apiKey)
      })))
})

describe("a Retry-After past any meaningful wait", () => {
  const headers: ReadonlyArray<Record<string, string>> = [
    { "retry-after": "1e308" },
    { "retry-after-ms": "1e308" },
    { "retry-after": "Fri, 31 Dec 9999 23:59:59 GMT" }
  ]

  it.live("1e308 seconds (Infinity ms), 1e308 ms, the year 9999: the error's retryAfterMillis is a day", () =>
    Effect.gen(function*() {
      for (const header of headers) {
        yield* against(
          (_request, response) => {
            response.writeHead(429, { "content-type": "application/json", ...header })
            response.end(JSON.stringify({ error: { message: "slow down" } }))
          },
          () =>
            Effect.gen(function*() {
              const error = yield* Effect.flip(Chat.create(hello))
              expect(error).toMatchObject({ _tag: "RateLimitError", retryAfterMillis: Duration.toMillis(ResponseMetadata.maxReset) })
            }),
          { maxRetries: 0 }
        )
      }
    }))
})

describe("Embeddings.create: a reply that cannot answer the request", () => {
  /** Answers with `data` as `shape` makes it from the inputs sent, each `[1, 2]` at its index. */
  const embeddings = (shape: (items: Array<{ index: number; embedding: Array<number> }>) => unknown): Handler =>
  (_request, response, body) => {
    const { input } = JSON.parse(body) as { input: string | Array<string> }
    const inputs = typeof input === "string" ? [input] : input
    json(response, 200, { data: shape(inputs.map((_, index) => ({ index, embedding: [1, 2] }))) })
  }
  type Items = Array<{ index: number; embedding: Array<number> }>
  const three = { model: "e", input: ["a", "b", "c"] }

  it.live("a vector missing or one too many, an index repeated or past the inputs, vectors of two lengths, a length other than dimensions", () =>
    Effect.forEach(
      [
        [three, (items: Items) => items.slice(1), /has 2 vectors for 3 inputs$/],
        [{ model: "e", input: "a" }, (items: Items) => [...items, { index: 1, embedding: [1, 2] }], /has 2 vectors for 1 inputs$/],
        [three, (items: Items) => items.map((item) => ({ ...item, index: 0 })), /not one per input index: data\[1\]\.index 0 repeats$/],
        [three, (items: Items) => items.map((item, i) => (i === 2 ? { ...item, index: 1e9 } : item)), /data\[2\]\.index 1000000000 is no input's \(0 to 2\)$/],
        [three, (items: Items) => items.map((item, i) => (i === 1 ? { ...item, embedding: [1] } : item)), /a vector of 1 numbers for input 1, input 0's has 2$/],
        [{ ...three, dimensions: 3 }, (items: Items) => items, /a vector of 2 numbers for input 0, not the 3 dimensions asked$/]
      ] as const,
      ([request, shape, message]) =>
        against(embeddings(shape), () =>
          Effect.gen(function*() {
            const error = yield* Effect.flip(Embeddings.create(request))
            expect(error._tag).toBe("ResponseDecodeError")
            expect(error.message).toMatch(message)
          }))
    ))

  it.live("vectors out of order, the dimensions asked: the reply as sent", () =>
    against(embeddings((items) => items.reverse()), () =>
      Effect.gen(function*() {
        const response = yield* Embeddings.create({ ...three, dimensions: 2 })
        expect(response.data.map((item) => item.index)).toEqual([2, 1, 0])
      })))

  it.live("embedMany: batches whose vectors differ in length", () =>
    against(
      (_request, response, body) => {
        const inputs = (JSON.parse(body) as { input: Array<string> }).input
        // The batch of "b" answers with vectors of 3 numbers, the other of 2.
        const embedding = inputs[0] === "b" ? [1, 2, 3] : [1, 2]
        json(response, 200, { data: inputs.map((_, index) => ({ index, embedding })) })
      },
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Embeddings.embedMany(["a", "b"], { model: "e", batchSize: 1 }))
          expect(error._tag).toBe("ResponseDecodeError")
          expect(error.message).toMatch(/a vector of 3 numbers for input 1, input 0's has 2$/)
        })
    ))
})

describe("token counts that cannot be counts", () => {
  const completion = (usage: unknown) => ({
    id: "x",
    choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "hi" } }],
    usage
  })
  const chunk = (usage: unknown) => `data: ${JSON.stringify({ id: "x", choices: [], usage })}\n\n`
  // 1e400 is Infinity once parsed: it would fill a token budget at once; a negative count would keep it from ever filling.
  const bad: ReadonlyArray<readonly [string, string]> = [
    ["1e400", `{"prompt_tokens":1e400,"completion_tokens":1,"total_tokens":1}`],
    ["-5", `{"prompt_tokens":1,"completion_tokens":-5,"total_tokens":1}`]
  ]

  it.live("a count of 1e400 or -5: the reply fails as a ResponseDecodeError naming the field, on a call and on a stream", () =>
    Effect.forEach(bad, ([, usage]) =>
      Effect.gen(function*() {
        const call = yield* against(
          (_request, response) => {
            // Written as text: 1e400 would be Infinity, and JSON.stringify writes that as null.
            response.writeHead(200, { "content-type": "application/json" })
            response.end(JSON.stringify(completion(null)).replace(`"usage":null`, `"usage":${usage}`))
          },
          () => Effect.flip(Chat.create(hello))
        )
        expect(call._tag).toBe("ResponseDecodeError")
        expect(call.message).toContain("usage")
        const stream = yield* against(
          (_request, response) => sse(response, `${chunk(null).replace(`"usage":null`, `"usage":${usage}`)}data: [DONE]\n\n`),
          () => Effect.flip(Stream.runDrain(Chat.stream(hello, { includeUsage: true })))
        )
        expect(stream._tag).toBe("ResponseDecodeError")
        expect(stream.message).toContain("usage")
      })))

  it.live("counts left out or null are 0, as before", () =>
    against(
      (_request, response) => json(response, 200, completion({ prompt_tokens: null, total_tokens: 3 })),
      () =>
        Effect.map(Chat.create(hello), (reply) =>
          expect(reply.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 3 }))
    ))
})
