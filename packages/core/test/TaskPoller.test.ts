import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { TaskUpdate } from "../src/TaskPoller.js"
import * as TaskPoller from "../src/TaskPoller.js"

/**
 * Forks `effect` and lets it start: the poll must be waiting on the clock
 * before a test moves it.
 */
const started = <A, E>(effect: Effect.Effect<A, E>) => Effect.tap(Effect.forkChild(effect), () => Effect.yieldNow)

/** A status effect that answers from a script, counting calls. */
const scripted = (answers: ReadonlyArray<TaskPoller.TaskUpdate | "fail">) =>
  Effect.map(Ref.make(0), (calls) => ({
    calls,
    status: Effect.flatMap(Ref.getAndUpdate(calls, (n) => n + 1), (i) => {
      const answer = answers[Math.min(i, answers.length - 1)]!
      return answer === "fail" ? Effect.fail("unavailable" as const) : Effect.succeed(answer)
    })
  }))

const queued = TaskUpdate.InProgress({ taskId: "t", status: "queued" })
const processing = (progress: number) => TaskUpdate.InProgress({ taskId: "t", status: "processing", progress })
const done = TaskUpdate.Succeeded({ taskId: "t", videoUrl: "http://x/v.mp4" })

describe("TaskPoller", () => {
  it.effect("emits every update in order and ends after the terminal one, calling status as the schedule says", () =>
    Effect.gen(function*() {
      const { calls, status } = yield* scripted([queued, processing(40), processing(80), done])
      // 1 s, 2 s, 4 s between calls: the 4th call happens at 7 s.
      const schedule = Schedule.exponential("1 second")
      const fiber = yield* started(Stream.runCollect(TaskPoller.poll("t", status, { schedule })))
      yield* TestClock.adjust("6999 millis")
      expect(yield* Ref.get(calls)).toBe(3)
      yield* TestClock.adjust("1 millis")
      const updates = (yield* Fiber.join(fiber))
      expect(updates).toEqual([queued, processing(40), processing(80), done])
      expect(yield* Ref.get(calls)).toBe(4)
    }))

  it.effect("with schedule undefined (what Videos passes when the layer sets no pollSchedule), the default backs off from about 1 s to 15 s", () =>
    Effect.gen(function*() {
      const { calls, status } = yield* scripted([queued])
      const fiber = yield* started(Stream.runDrain(TaskPoller.poll("t", status, { schedule: undefined })))
      // The first wait is 1 s, jittered by 0.8–1.2.
      yield* TestClock.adjust("799 millis")
      expect(yield* Ref.get(calls)).toBe(1)
      yield* TestClock.adjust("401 millis")
      expect(yield* Ref.get(calls)).toBe(2)
      // Then 2, 4, 8 s and at most 15 s (18 s jittered): at least 10 calls by 121.2 s; without the cap, at most 7.
      yield* TestClock.adjust("120 seconds")
      expect(yield* Ref.get(calls)).toBeGreaterThanOrEqual(10)
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("a failed task ends the stream with the Failed update", () =>
    Effect.gen(function*() {
      const failed = TaskUpdate.Failed({ taskId: "t", reason: "content policy" })
      const { status } = yield* scripted([queued, failed])
      const fiber = yield* started(Stream.runCollect(TaskPoller.poll("t", status, { schedule: Schedule.spaced("1 second") })))
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(fiber))).toEqual([queued, failed])
    }))

  it.effect("the deadline fails with TaskTimeoutError carrying the last status", () =>
    Effect.gen(function*() {
      const { status } = yield* scripted([processing(10)])
      const fiber = yield* started(
        Effect.flip(Stream.runDrain(TaskPoller.poll("t", status, { schedule: Schedule.spaced("1 second"), deadline: "30 seconds" })))
      )
      yield* TestClock.adjust("30 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "TaskTimeoutError", taskId: "t", lastStatus: "processing" })
    }))

  it.effect("failed status calls are retried within the poll and do not end it", () =>
    Effect.gen(function*() {
      const { calls, status } = yield* scripted([queued, "fail", "fail", done])
      const fiber = yield* started(Stream.runCollect(TaskPoller.poll("t", status, {
        schedule: Schedule.spaced("1 second"),
        statusRetry: Schedule.spaced("1 second").pipe(Schedule.upTo({ times: 3 }))
      })))
      yield* TestClock.adjust("10 seconds")
      expect((yield* Fiber.join(fiber))).toEqual([queued, done])
      expect(yield* Ref.get(calls)).toBe(4)
    }))

  it.effect("a status call that keeps failing past its budget ends the poll with its error", () =>
    Effect.gen(function*() {
      const { status } = yield* scripted([queued, "fail"])
      const fiber = yield* started(Effect.flip(Stream.runDrain(TaskPoller.poll("t", status, {
        schedule: Schedule.spaced("1 second"),
        statusRetry: Schedule.spaced("1 second").pipe(Schedule.upTo({ times: 2 }))
      }))))
      yield* TestClock.adjust("1 minute")
      expect(yield* Fiber.join(fiber)).toBe("unavailable")
    }))

  it.effect("interruption stops polling at once", () =>
    Effect.gen(function*() {
      const { calls, status } = yield* scripted([queued])
      const fiber = yield* started(Stream.runDrain(TaskPoller.poll("t", status, { schedule: Schedule.spaced("1 second") })))
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.interrupt(fiber)
      const before = yield* Ref.get(calls)
      yield* TestClock.adjust("1 minute")
      expect(yield* Ref.get(calls)).toBe(before)
    }))

  it.effect("a status call still running at the deadline is cut there, with TaskTimeoutError", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      // The first call answers; the second never does.
      const status = Effect.flatMap(Ref.getAndUpdate(calls, (n) => n + 1), (i) => (i === 0 ? Effect.succeed(queued) : Effect.never))
      const fiber = yield* started(
        Effect.flip(Stream.runDrain(TaskPoller.poll("t", status, { schedule: Schedule.spaced("1 second"), deadline: "30 seconds" })))
      )
      yield* TestClock.adjust("29 seconds")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toMatchObject({ _tag: "TaskTimeoutError", taskId: "t", lastStatus: "queued" })
      expect(yield* Ref.get(calls)).toBe(2)
    }))

  it.effect("an infinite deadline never ends the poll", () =>
    Effect.gen(function*() {
      const { calls, status } = yield* scripted([queued])
      const fiber = yield* started(
        Stream.runDrain(TaskPoller.poll("t", status, { schedule: Schedule.spaced("1 hour"), deadline: Duration.infinity }))
      )
      yield* TestClock.adjust("10 days")
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect(yield* Ref.get(calls)).toBeGreaterThan(200)
      yield* Fiber.interrupt(fiber)
    }))
})
