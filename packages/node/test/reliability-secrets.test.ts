/**
 * Decision 8: the key never appears. Every capability and every error the
 * SDK can fail with is run with a known key while capturing everything a
 * user could see or ship: every log line (the only logger, at log
 * level All, in three formats, each failure's `Cause` logged through it),
 * every error's message, `toString`, JSON, inspection and stack, every
 * success value, and every span with its attributes, events and exit (a
 * recording tracer around the whole run, the emulator's server spans
 * included). The key must appear in none of it.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Chat,
  Embeddings,
  Images,
  Models,
  Moderations,
  Switchboard,
  SwitchboardConfig,
  SwitchboardError,
  TaskJournal,
  Videos
} from "@switchboard/core"
import { JournalError } from "@switchboard/core/SwitchboardError"
import { Emulator } from "@switchboard/emulator"
import * as RecordingTracer from "@switchboard/test-support/RecordingTracer"
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Formatter from "effect/Formatter"
import * as Inspectable from "effect/Inspectable"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Ref from "effect/Ref"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import type * as Tracer from "effect/Tracer"
import * as NodeHttpWire from "../src/NodeHttpWire.js"
import { emulated, waitUntil } from "./fixtures.js"

const secret = "sk-reliability-5ecret-7f3a9c1e2b4d6f80"
const model = Emulator.chatMiniModel
const hello = { model, messages: [{ role: "user" as const, content: "Hello" }] }
const instantPolls = { schedule: Schedule.spaced("0 millis") } as const

// ---------------------------------------------------------------------------
// What is captured
// ---------------------------------------------------------------------------

const seen: Array<string> = []
const outcomes: Array<{ readonly name: string; readonly tag: string }> = []
const spans: Array<Tracer.Span> = []

const capturingLogger = Logger.make((options) => {
  seen.push(Logger.formatSimple.log(options), Logger.formatLogFmt.log(options), Logger.formatJson.log(options))
})
const logging = Layer.merge(Logger.layer([capturingLogger]), Layer.succeed(References.MinimumLogLevel, "All"))

const recordingTracer = RecordingTracer.make(spans)

const describeError = (error: unknown): ReadonlyArray<string> => [
  String(error),
  (error as Error).message,
  JSON.stringify(error),
  Formatter.format(error),
  Inspectable.toStringUnknown(error),
  String((error as Error).stack)
]

/** Runs one path, records how it ended and everything it showed; the failure is logged too. */
const observe = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Effect.withLogSpan(Effect.annotateLogs(effect, "path", name), name))
    if (Exit.isSuccess(exit)) {
      outcomes.push({ name, tag: "success" })
      seen.push(Formatter.format(exit.value), Inspectable.toStringUnknown(exit.value))
      yield* Effect.logDebug("succeeded", exit.value)
      return
    }
    const error = Cause.squash(exit.cause)
    outcomes.push({ name, tag: (error as { _tag?: string })._tag ?? "untyped" })
    seen.push(Cause.pretty(exit.cause), ...describeError(error))
    yield* Effect.logError(`${name} failed`, exit.cause)
  })

/** Forks `effect`, lets it make `requests` requests, each followed by `step` of TestClock time. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>, requests: number, step: Duration.Input) =>
  Effect.gen(function*() {
    const emulator = yield* Emulator.Emulator
    const before = yield* emulator.requestCount
    const fiber = yield* Effect.forkChild(effect)
    for (let n = 1; n <= requests; n++) {
      yield* emulator.awaitRequests(before + n)
      yield* TestClock.adjust(step)
    }
    return yield* Fiber.join(fiber)
  })

const shortLimits = Switchboard.withRequestOptions({
  timeout: "300 millis",
  streamFirstByteTimeout: "300 millis",
  streamIdleTimeout: "300 millis"
})

const faults = (...script: ReadonlyArray<Emulator.Fault>) =>
  Effect.flatMap(Emulator.Emulator, (emulator) => emulator.setFaults({ script }))

// ---------------------------------------------------------------------------
// The paths
// ---------------------------------------------------------------------------

const capabilities = Effect.gen(function*() {
  yield* observe("Chat.create", Chat.create(hello))
  yield* observe("Chat.stream", Chat.accumulate(Chat.stream(hello, { includeUsage: true })))
  yield* observe("Chat.streamText", Stream.runCollect(Chat.streamText(hello)))
  yield* observe("Images.generate", Images.generate({ prompt: "A red fox", size: "1024x1024" }))
  yield* observe("Images.transform", Images.transform({ prompt: "Make it blue", image: "https://example.com/fox.png" }))
  yield* observe("Embeddings.create", Embeddings.create({ model: Emulator.embeddingModel, input: ["a", "b"] }))
  yield* observe("Embeddings.embedMany", Embeddings.embedMany(["a", "b", "c"], { model: Emulator.embeddingModel, batchSize: 2 }))
  yield* observe("Moderations.create", Moderations.create({ input: "I will attack" }))
  yield* observe("Moderations.check", Moderations.check("hello"))
  yield* observe("Models.list", Models.list)
  const taskId = yield* Videos.submit({ model: Emulator.videoModel, prompt: "Waves" })
  yield* observe("Videos.status", Videos.status(taskId))
  yield* observe("Videos.poll", Stream.runCollect(Videos.poll(taskId, instantPolls)))
  yield* observe("Videos.generate", Videos.generate({ model: Emulator.videoModel, prompt: "Clouds" }, instantPolls))
  yield* observe("Videos.resumePending", Effect.flatMap(Videos.resumePending(instantPolls), (resumed) => Effect.succeed(resumed.pending.length)))
})

const errorPaths = Effect.gen(function*() {
  yield* observe("invalid request", Chat.create({ ...hello, model: "" }))
  yield* observe("invalid stream request", Stream.runDrain(Chat.stream({ ...hello, messages: [] })))
  // A per-call header may not replace the key: refused, the value never echoed.
  yield* observe(
    "per-call authorization",
    Chat.create(hello).pipe(Switchboard.withRequestOptions({ headers: { Authorization: `Bearer ${secret}` } }))
  )
  yield* faults({ _tag: "Status", status: 400 })
  yield* observe("400", Chat.create(hello))
  yield* observe("400 from the service", Embeddings.create({ model, input: "x" }))
  yield* faults({ _tag: "Status", status: 403 })
  yield* observe("403", Models.list)
  yield* observe("404 model", Chat.create({ ...hello, model: "no-such-model" }))
  yield* observe("404 task", Videos.status("task_unknown"))
  yield* faults({ _tag: "Status", status: 409 }, { _tag: "Status", status: 409 })
  yield* observe("409", Moderations.create({ input: "x" }))
  yield* faults({ _tag: "Status", status: 429, retryAfter: 0 }, { _tag: "Status", status: 429, retryAfterMs: 0 })
  yield* observe("429", Chat.create(hello))
  yield* faults({ _tag: "Status", status: 413 })
  yield* observe("413", Chat.create(hello))
  yield* observe("too large", Chat.accumulate(Chat.stream(hello), { maxCharacters: 5 }))
  yield* faults({ _tag: "Status", status: 500 }, { _tag: "Status", status: 503 })
  yield* observe("5xx", Stream.runDrain(Chat.stream(hello)))
  yield* faults({ _tag: "Status", status: 408 }, { _tag: "Status", status: 408 })
  yield* observe("408", Models.list)
  yield* faults({ _tag: "Reset" }, { _tag: "Reset" })
  yield* observe("reset", Chat.create(hello))
  yield* faults({ _tag: "ResetAfterHeaders" }, { _tag: "ResetAfterHeaders" })
  yield* observe("reset after headers", Embeddings.create({ model: Emulator.embeddingModel, input: "x" }))
  yield* faults({ _tag: "TruncateBody", closeConnection: true }, { _tag: "TruncateBody", closeConnection: true })
  yield* observe("body cut by the connection", Models.list)
  yield* faults({ _tag: "TruncateBody" })
  yield* observe("truncated JSON", Chat.create(hello))
  yield* faults({ _tag: "ResetAfterHeaders" })
  yield* observe("video submission dropped", Videos.submit({ model: Emulator.videoModel, prompt: "Rain" }))
  yield* faults({ _tag: "CutStream", afterChunks: 3 })
  yield* observe("stream cut", Chat.accumulate(Chat.stream(hello)))
  yield* faults({ _tag: "ErrorEvent", afterChunks: 2, message: "The model is overloaded" })
  yield* observe("error event", Chat.accumulate(Chat.stream(hello)))
  yield* faults({ _tag: "TruncateBody", closeConnection: true })
  yield* observe("stream lost mid-way", Stream.runDrain(Chat.stream(hello)))
  yield* faults({ _tag: "Delay", delay: "1 hour" }, { _tag: "Delay", delay: "1 hour" })
  // The Node wire keeps time limits with real timers: short ones for these paths.
  yield* observe("request timeout", timed(Chat.create(hello).pipe(shortLimits), 2, "5 seconds"))
  yield* faults({ _tag: "Delay", delay: "1 hour", afterHeaders: true }, { _tag: "Delay", delay: "1 hour" })
  yield* observe("first-byte timeout", timed(Stream.runDrain(Chat.stream(hello)).pipe(shortLimits), 2, "5 seconds"))
  yield* faults({ _tag: "StallStream", afterChunks: 2 })
  yield* observe(
    "idle timeout",
    Effect.gen(function*() {
      const received = yield* Ref.make(0)
      const fiber = yield* Effect.forkChild(
        Stream.runDrain(Stream.tap(Chat.stream(hello), () => Ref.update(received, (n) => n + 1))).pipe(shortLimits)
      )
      yield* waitUntil(Ref.get(received), (n) => n === 2)
      return yield* Fiber.join(fiber)
    })
  )
  yield* observe("task failed", Videos.generate({ model: Emulator.videoModel, prompt: "Please fail" }, instantPolls))
  yield* observe(
    "task timeout",
    timed(Videos.generate({ model: Emulator.videoModel, prompt: "stuck forever" }, { schedule: Schedule.spaced("1 second"), deadline: "1 minute" }), 2, "1 minute")
  )
  yield* observe("no image", Images.generate({ prompt: "Please refuse this" }))
})

/** The SDK over a journal that cannot be written, against the same emulator. */
const journalFailure = Effect.flatMap(Emulator.Emulator, (emulator) =>
  observe("journal failure", Videos.submit({ model: Emulator.videoModel, prompt: "Snow" })).pipe(
    Effect.provide(
      // Fresh, or Effect 4 reuses the services `emulated` built (a journal that works).
      Layer.fresh(Switchboard.layer).pipe(
        Layer.provideMerge(SwitchboardConfig.layer({ baseUrl: emulator.url, apiKey: secret })),
        Layer.provide(NodeHttpWire.layer),
        Layer.provide(Layer.succeed(TaskJournal.TaskJournal, {
          reserve: () => Effect.fail(new JournalError({ message: "the journal's disk is full" })),
          record: () => Effect.fail(new JournalError({ message: "the journal's disk is full" })),
          get: () => Effect.succeedNone,
          remove: () => Effect.void,
          scan: Effect.succeed({ entries: [], quarantined: [] }),
          list: Effect.succeed([]),
          claim: () => Effect.succeed(true)
        })),
        Layer.orDie
      )
    )
  ))

const allTags = SwitchboardError.errorTags

const expectedErrors: Record<string, SwitchboardError.SwitchboardError["_tag"]> = {
  "invalid request": "InvalidRequestError",
  "invalid stream request": "InvalidRequestError",
  "per-call authorization": "ConfigurationError",
  "400": "BadRequestError",
  "400 from the service": "BadRequestError",
  "403": "PermissionDeniedError",
  "404 model": "NotFoundError",
  "404 task": "TaskNotFoundError",
  "409": "ConflictError",
  "429": "RateLimitError",
  "413": "ClientError",
  "too large": "ResponseTooLargeError",
  "5xx": "ServerError",
  "408": "TimeoutError",
  "reset": "TransportError",
  "reset after headers": "TransportError",
  "body cut by the connection": "TransportError",
  "truncated JSON": "ResponseDecodeError",
  "video submission dropped": "TransportError",
  "stream cut": "StreamError",
  "error event": "StreamError",
  "stream lost mid-way": "StreamError",
  "request timeout": "TimeoutError",
  "first-byte timeout": "TimeoutError",
  "idle timeout": "TimeoutError",
  "task failed": "TaskFailedError",
  "task timeout": "TaskTimeoutError",
  "no image": "NoImageInResponseError",
  "journal failure": "JournalError",
  "401": "AuthenticationError"
}

const config = { retryBaseDelay: 0, maxRetries: 1, timeout: "5 seconds", streamFirstByteTimeout: "5 seconds", streamIdleTimeout: "5 seconds" } as const

describe("the API key never appears", () => {
  it.effect("in any log line, error, success value or span of every capability and every error path", () =>
    Effect.gen(function*() {
      const tracer = yield* recordingTracer
      yield* Effect.gen(function*() {
        const resolved = yield* SwitchboardConfig.SwitchboardConfig
        seen.push(Formatter.format(resolved), JSON.stringify(resolved), String(resolved.apiKey))
        yield* capabilities
        yield* errorPaths
        yield* journalFailure
      }).pipe(Effect.provide(emulated(config, { apiKey: secret })), Effect.withTracer(tracer), Effect.provide(logging))
      // A wrong key, as far as the service is concerned: the SDK still holds `secret`.
      yield* observe("401", Chat.create(hello)).pipe(
        Effect.provide(emulated({ ...config, apiKey: secret }, { apiKey: "sk-another-key" })),
        Effect.withTracer(tracer),
        Effect.provide(logging)
      )

      for (const span of spans) {
        seen.push(span.name, Formatter.format(Object.fromEntries(span.attributes)))
        if (span.status._tag === "Ended") {
          seen.push(Exit.isFailure(span.status.exit) ? Cause.pretty(span.status.exit.cause) : Formatter.format(span.status.exit))
        }
        const events = (span as { readonly events?: ReadonlyArray<unknown> }).events
        if (events) seen.push(Formatter.format(events))
      }

      // Each path ended as it should, every error of the union was met, and what was captured is not empty.
      expect(Object.fromEntries(outcomes.filter((o) => o.tag !== "success").map((o) => [o.name, o.tag]))).toEqual(expectedErrors)
      const tags = new Set(outcomes.map((o) => o.tag))
      expect(allTags.filter((tag) => !tags.has(tag))).toEqual([])
      expect(tags.has("untyped")).toBe(false)
      expect(outcomes.filter((o) => o.tag === "success").length).toBe(14)
      expect(spans.some((span) => span.name === `chat ${model}` && span.attributes.get("gen_ai.request.stream") === true)).toBe(true)
      expect(seen.some((line) => line.includes("AuthenticationError") && line.includes("level=ERROR"))).toBe(true)

      const leaks = seen.filter((text) => text.includes(secret) || text.includes(secret.slice(-16)))
      expect(leaks).toEqual([])
      console.log(
        `secrets: ${outcomes.length} paths (${outcomes.filter((o) => o.tag === "success").length} successes, ${
          tags.size - 1
        } error types), ${spans.length} spans, ${seen.length} captured texts, ${leaks.length} containing the key`
      )
    }))
})
