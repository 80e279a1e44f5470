/**
 * The video workflow on the in-memory engine with the TestClock, against the
 * emulator over real HTTP: one submission, polls on the schedule, the
 * deadline, the typed ends, the idempotency key.
 */
import { describe, expect, it } from "@effect/vitest"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Videos from "@switchboard/core/Videos"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { VideoWorkflow } from "../src/index.js"
import { drive, emulated, requestsTo } from "./fixtures.js"

const model = "video-1"

/** The engine with the workflow registered, over the emulator; status calls' times kept in `times`. */
const setup = (times: Ref.Ref<ReadonlyArray<number>>, options: Parameters<typeof VideoWorkflow.layer>[0]) =>
  VideoWorkflow.layer(options).pipe(
    Layer.provideMerge(WorkflowEngine.layerMemory),
    // Merged, so the workflow sees this `Videos` rather than the emulated one.
    Layer.provideMerge(
      Layer.effect(
        Videos.Videos,
        Effect.map(Videos.Videos, (videos) => ({
          ...videos,
          status: (taskId: string) =>
            Effect.andThen(
              Effect.flatMap(Clock.currentTimeMillis, (at) => Ref.update(times, (all) => [...all, at])),
              videos.status(taskId)
            )
        }))
      )
    ),
    Layer.provideMerge(emulated())
  )

const run = <A, E, R>(
  options: Parameters<typeof VideoWorkflow.layer>[0],
  f: (times: Ref.Ref<ReadonlyArray<number>>) => Effect.Effect<A, E, R>
) =>
  Effect.flatMap(Ref.make<ReadonlyArray<number>>([]), (times) =>
    Effect.flatMap(Effect.forkChild(f(times)), drive).pipe(Effect.provide(setup(times, options)))) as Effect.Effect<
      A,
      E,
      Exclude<R, WorkflowEngine.WorkflowEngine | Videos.Videos | TaskJournal.TaskJournal | import("@switchboard/emulator").Emulator.Emulator>
    >

describe("VideoWorkflow", () => {
  it.effect("submits once and polls on the schedule to the video", () =>
    run({ schedule: Schedule.spaced("2 seconds") }, (times) =>
      Effect.gen(function*() {
        const video = yield* VideoWorkflow.generate({ model, prompt: "a fox in the snow" })
        expect(video.videoUrl).toMatch(new RegExp(`${video.taskId}`))
        expect(yield* requestsTo("/chat/completions")).toHaveLength(1)
        // The emulator answers two in-progress polls before the end.
        expect(yield* Ref.get(times)).toEqual([0, 2000, 4000])
      })))

  // The workflow's storage keeps the task: a record left in the plain journal
  // (on disk by default with layerConfig) would be followed a second time by
  // any program's Videos.resumePending.
  it.effect("leaves no record in the task journal: the workflow's storage keeps the task", () =>
    run({ schedule: Schedule.spaced("2 seconds") }, () =>
      Effect.gen(function*() {
        yield* VideoWorkflow.generate({ model, prompt: "a heron at dawn" })
        expect(yield* Effect.flatMap(TaskJournal.TaskJournal, (journal) => journal.list)).toEqual([])
      })))

  it.effect("follows the default schedule's growing waits", () =>
    run({ schedule: Schedule.exponential("10 millis"), deadline: "1 hour" }, (times) =>
      Effect.gen(function*() {
        yield* VideoWorkflow.generate({ model, prompt: "a slow river" })
        // "slow" gives ten in-progress polls: waits of 0.01, 0.02, 0.04 … 5.12 s,
        // all shorter than the journal's claim renewals, which `drive` leaves alone.
        const at = yield* Ref.get(times)
        expect(at).toEqual([0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1023].map((s) => s * 10))
      })))

  it.effect("ends a task that fails in TaskFailedError with the service's reason", () =>
    run({ schedule: Schedule.spaced("1 second") }, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(VideoWorkflow.generate({ model, prompt: "please fail" }))
        expect(error._tag).toBe("TaskFailedError")
        expect(error).toMatchObject({ reason: "The emulator was asked to fail this task." })
      })))

  it.effect("ends at the deadline in TaskTimeoutError with the last status", () =>
    run({ schedule: Schedule.spaced("2 seconds"), deadline: "5 seconds" }, (times) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(VideoWorkflow.generate({ model, prompt: "stuck forever" }))
        expect(error._tag).toBe("TaskTimeoutError")
        expect(error).toMatchObject({ lastStatus: "processing" })
        expect(yield* Ref.get(times)).toEqual([0, 2000, 4000])
        // The last wait is cut at the deadline, as in `Videos.poll`.
        expect(yield* Clock.currentTimeMillis).toBe(5000)
      })))

  it.effect("ends in TaskTimeoutError when the schedule runs out", () =>
    run({ schedule: Schedule.max([Schedule.spaced("1 second"), Schedule.recurs(2)]) }, (times) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(VideoWorkflow.generate({ model, prompt: "stuck forever" }))
        expect(error._tag).toBe("TaskTimeoutError")
        expect(yield* Ref.get(times)).toHaveLength(3)
      })))

  it.effect("gives one task for one key, and a new task for a new key", () =>
    run({ schedule: Schedule.spaced("1 second") }, () =>
      Effect.gen(function*() {
        const request = { model, prompt: "a lighthouse at dusk" }
        const first = yield* VideoWorkflow.start(request, { key: "order-1" })
        const again = yield* VideoWorkflow.start({ model, prompt: "another prompt" }, { key: "order-1" })
        expect(again).toBe(first)
        const [a, b] = yield* Effect.all([
          VideoWorkflow.generate(request, { key: "order-1" }),
          VideoWorkflow.generate(request, { key: "order-1" })
        ], { concurrency: 2 })
        expect(b).toEqual(a)
        expect(yield* requestsTo("/chat/completions")).toHaveLength(1)
        // Without a key, the request is the key: the same request is the same task.
        const c = yield* VideoWorkflow.generate(request)
        const d = yield* VideoWorkflow.generate(request)
        expect(d).toEqual(c)
        expect(c.taskId).not.toBe(a.taskId)
        expect(yield* requestsTo("/chat/completions")).toHaveLength(2)
        const result = yield* VideoWorkflow.result("order-1")
        expect(result?._tag).toBe("Complete")
      })))

  it.effect("rejects a bad request with the field named, before anything is sent", () =>
    run({}, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(VideoWorkflow.generate({ model, prompt: "ok", max_tokens: -1 }, { key: "bad" }))
        expect(error).toMatchObject({ _tag: "InvalidRequestError", field: "max_tokens" })
        expect(yield* requestsTo("/chat/completions")).toHaveLength(0)
      })))
})
