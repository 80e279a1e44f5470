/**
 * `UiStream.encodeAgent` (and `agentSse`, `agentText`) of a stream that
 * `Agent.stream` made runs the loop itself and writes each event's frames as
 * it comes (no queue between the run and the frames). Against the emulator over real HTTP, it must write
 * the bytes that the events' own encoder writes (the same stream piped on,
 * which has no run behind it), keep a paused run before its frames can be
 * read, and wait for a reader that is behind. (That a page that goes away
 * stops the run and the exchange with the service: `ui-server.test.ts` and
 * `ui-stream.test.ts`, through `UiServer`, which writes this way.)
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Agent, UiStream } from "../src/index.js"
import * as RunOf from "../src/internal/runOf.js"
import { emulated } from "./fixtures.js"
import { handlers, model, toolkit } from "./tools.js"

const user = (content: string): Protocol.Message => ({ role: "user", content })

const setup = Effect.provide(Layer.merge(emulated(), handlers()))

const text = <E, R>(stream: Stream.Stream<Uint8Array, E, R>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => Buffer.concat(chunks).toString("utf8"))

/** The same events with no run behind them: `Stream.map` makes a new stream. */
const piped = <A, E, R>(events: Stream.Stream<A, E, R>) => Stream.map(events, identity)

/** Both encoders of a run made twice (the emulator answers the same request the same way). */
const both = <E, R>(
  make: () => Stream.Stream<Agent.AgentEvent<undefined, typeof toolkit.tools>, E, R>,
  options: UiStream.Options = {}
) =>
  Effect.all({
    direct: text(UiStream.encodeAgent(make(), options)),
    events: text(UiStream.encodeAgent(piped(make()), options))
  })

const errorText = (error: unknown) => `failed: ${(error as { _tag?: string })._tag}`

describe("UiStream.encodeAgent of Agent.stream", () => {
  it.effect("writes the bytes of the events' encoder: steps, text, tool calls and results", () =>
    Effect.gen(function*() {
      const { direct, events } = yield* both(() =>
        Agent.stream({ model, toolkit, messages: [user("Use get_weather and get_time for Paris")] })
      )
      expect(direct).toBe(events)
      for (const type of ["start", "start-step", "tool-input-available", "tool-output-available", "text-delta", "finish"]) {
        expect(direct).toContain(`{"type":"${type}"`)
      }
      expect(direct.endsWith("data: [DONE]\n\n")).toBe(true)
    }).pipe(setup))

  it.effect("a paused run, and its resumed run", () =>
    Effect.gen(function*() {
      const messages = [user("Use get_weather and delete_file")]
      const { direct, events } = yield* both(() => Agent.stream({ model, toolkit, messages }))
      expect(direct).toBe(events)
      expect(direct).toContain("\"type\":\"tool-approval-request\"")
      const paused = yield* Agent.run({ model, toolkit, messages })
      const decisions = Object.fromEntries(paused.pending.map((p) => [p.approvalId, "approve" as const]))
      const { transcript, usage } = paused
      const resumed = yield* both(
        () => Agent.resumeStream({ model, toolkit, transcript, usage, decisions }),
        { resumed: true, messageId: "m-1" }
      )
      expect(resumed.direct).toBe(resumed.events)
      expect(resumed.direct).toContain("\"messageId\":\"m-1\"")
      expect(resumed.direct).toContain("\"deleted\"")
    }).pipe(setup))

  it.effect("a failed run: what was written, then the error part with the options' text, then [DONE]", () =>
    Effect.gen(function*() {
      const { direct, events } = yield* both(
        () => Agent.stream({ model, toolkit, maxSteps: 1, messages: [user("Use get_time then get_weather")] }),
        { errorText }
      )
      expect(direct).toBe(events)
      expect(direct).toContain("\"type\":\"tool-output-available\"")
      expect(direct.endsWith("data: {\"type\":\"error\",\"errorText\":\"failed: MaxStepsExceeded\"}\n\ndata: [DONE]\n\n"))
        .toBe(true)
    }).pipe(setup))

  it.effect("keeps a paused run (onFinished) before the frames of its finish can be read", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      yield* UiStream.encodeAgent(Agent.stream({ model, toolkit, messages: [user("Use delete_file")] }), {
        onFinished: (result) => Effect.sync(() => seen.push(`kept ${result.status}`))
      }).pipe(
        Stream.runForEach((bytes) => Effect.sync(() => seen.push(Buffer.from(bytes).includes("\"finish\"") ? "finish" : "frames")))
      )
      expect(seen.slice(seen.indexOf("kept paused"))).toEqual(["kept paused", "finish"])
    }).pipe(setup))
})

/**
 * The text with what differs from run to run left out of each event's JSON:
 * a reply's metadata (the emulator's request id, its `date` header) and the
 * run's trace ids.
 */
const ownIds = (text: string) =>
  text.split("\n").map((line) => line.startsWith("data: {") ? `data: ${JSON.stringify(JSON.parse(line.slice(6)), (key, value) => key === "response" || key === "trace" ? undefined : value)}` : line).join("\n")

describe("UiStream.agentSse and agentText of Agent.stream", () => {
  const encoders = [["agentSse", UiStream.agentSse], ["agentText", UiStream.agentText]] as const
  for (const [name, encoder] of encoders) {
    it.effect(`${name}: the bytes of the events' encoder, for a run and a failed run`, () =>
      Effect.gen(function*() {
        const make = () => Agent.stream({ model, toolkit, messages: [user("Use get_weather and get_time for Paris")] })
        const direct = yield* text(encoder(make()))
        expect(ownIds(direct)).toBe(ownIds(yield* text(encoder(piped(make())))))
        expect(direct).toContain("get_weather →")
        const failing = () => Agent.stream({ model, toolkit, maxSteps: 1, messages: [user("Use get_time then get_weather")] })
        const failed = yield* text(encoder(failing(), { errorText }))
        expect(ownIds(failed)).toBe(ownIds(yield* text(encoder(piped(failing()), { errorText }))))
        expect(failed).toContain("failed: MaxStepsExceeded")
      }).pipe(setup))
  }
})

describe("UiStream.encodeAgent of Agent.stream, a reader behind", () => {
  // A run of its own (what `Agent.stream` remembers), so that nothing but the encoder can make it wait:
  // it sends text deltas for ever, counting them.
  const endless = () => {
    const sent = { count: 0 }
    const events = RunOf.remember(Stream.empty as Stream.Stream<Agent.AgentEvent>, (emit) =>
      Effect.forever(Effect.suspend(() => {
        sent.count++
        return emit({ _tag: "TextDelta", step: 0, text: " tok" })
      })))
    return { sent, frames: UiStream.encodeAgent(events) }
  }
  /**
   * Lets the run go until it has sent nothing for 50 of this fiber's turns
   * (each fiber schedules its own turns, so one turn may come before the
   * run's), or for 10,000 turns: what it sent.
   */
  const settle = (sent: { count: number }) =>
    Effect.gen(function*() {
      for (let turn = 0, still = 0, last = sent.count; turn < 10_000 && still < 50; turn++) {
        yield* Effect.yieldNow
        still = sent.count === last ? still + 1 : 0
        last = sent.count
      }
      return sent.count
    })

  it.effect("every fiber of the run that waits goes on at the next read (tools emit from fibers of their own)", () =>
    Effect.gen(function*() {
      const sent = { count: 0 }
      const finished: Array<string> = []
      // Two fibers emitting at once (as a step's tool calls do), each 2,000 deltas of 1,200 characters: each
      // goes past 64 K unread before the scheduler lets the reader in.
      const delta = " tok".repeat(300)
      const emitter = (emit: RunOf.Emit, name: string) =>
        Effect.andThen(
          Effect.forEach(Array.from({ length: 2_000 }), () =>
            Effect.suspend(() => {
              sent.count++
              return emit({ _tag: "TextDelta", step: 0, text: delta })
            }), { discard: true }),
          Effect.sync(() => finished.push(name))
        )
      const events = RunOf.remember(Stream.empty as Stream.Stream<Agent.AgentEvent>, (emit) =>
        Effect.andThen(
          Effect.all([emitter(emit, "a"), emitter(emit, "b")], { concurrency: 2 }),
          Effect.die("the end")
        ))
      const read = yield* text(UiStream.encodeAgent(events))
      expect(finished.sort()).toEqual(["a", "b"])
      expect(read.split("\"type\":\"text-delta\"").length - 1).toBe(4_000)
      expect(read.endsWith("data: [DONE]\n\n")).toBe(true)
    }))

  it.effect("waits once 64 K characters of frames are unread, and goes on at the next read", () =>
    Effect.gen(function*() {
      const { frames, sent } = endless()
      const pull = yield* Stream.toPull(frames)
      const first = yield* pull
      const parked = yield* settle(sent)
      // Nothing read since: the run waits, with at most 64 K characters (plus one frame) of frames made.
      expect(yield* settle(sent)).toBe(parked)
      const frame = `data: {"type":"text-delta","id":"text-0","delta":" tok"}\n\n`.length
      expect(parked * frame).toBeGreaterThanOrEqual(64 * 1024)
      expect(parked * frame).toBeLessThan(64 * 1024 + 2 * frame)
      // A read takes them all at once; the run goes on.
      const next = yield* pull
      const read = Buffer.concat([...first, ...next]).toString("utf8")
      expect(read.split("\"type\":\"text-delta\"").length - 1).toBe(parked)
      expect(yield* settle(sent)).toBeGreaterThan(parked)
    }).pipe(Effect.scoped))
})
