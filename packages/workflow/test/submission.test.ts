/**
 * Case 1 of issue 29 in process (the in-memory engine, the TestClock, the
 * emulator over real HTTP): the submission activity runs again after the
 * service answered it but before its result was stored. Here the answer is
 * lost by interrupting the activity right after it: no result is stored, and
 * effect/workflow's `Activity` runs an interrupted activity again in the same
 * run (a replay on another runner is `submission.processes.test.ts`). At most
 * once (the default): the second run fails typed and sends nothing. At least
 * once (opt-in): it submits again and the task ends.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Videos from "@switchboard/core/Videos"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { VideoWorkflow } from "../src/index.js"
import { drive, emulated, requestsTo } from "./fixtures.js"

/** `Videos` whose first submission is answered by the service, then lost before the activity can store it. */
const losingFirstAnswer = Layer.effect(
  Videos.Videos,
  Effect.map(Videos.Videos, (videos) => {
    let answered = 0
    return {
      ...videos,
      submit: (request: Videos.SubmitRequest, options?: Videos.SubmitOptions) =>
        Effect.flatMap(videos.submit(request, options), (taskId) => (++answered === 1 ? Effect.interrupt : Effect.succeed(taskId)))
    }
  })
)

const setup = (options: Parameters<typeof VideoWorkflow.layer>[0]) =>
  VideoWorkflow.layer(options).pipe(
    Layer.provideMerge(WorkflowEngine.layerMemory),
    Layer.provideMerge(losingFirstAnswer),
    Layer.provideMerge(emulated())
  )

const run = <A, E, R>(options: Parameters<typeof VideoWorkflow.layer>[0], effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.forkChild(effect), drive).pipe(Effect.provide(setup(options)))

const request = { model: "video-1", prompt: "a paid clip" }

describe("VideoWorkflow submission after a lost answer", () => {
  it.effect("at most once (the default): fails typed with the request and the time sent, one submission", () =>
    run(
      { schedule: Schedule.spaced("1 second") },
      Effect.gen(function*() {
        const error = yield* Effect.flip(VideoWorkflow.generate(request, { key: "paid-1" }))
        expect(error._tag).toBe("SubmissionOutcomeUnknownError")
        expect(error).toMatchObject({ key: "paid-1", request, sentAt: 0 })
        expect(error.message).toContain("paid-1")
        expect(yield* requestsTo("/chat/completions")).toHaveLength(1)
        // The workflow ended there: asking again gives the same error, nothing sent.
        const again = yield* VideoWorkflow.result("paid-1")
        expect(again?._tag).toBe("Complete")
        expect(yield* requestsTo("/chat/completions")).toHaveLength(1)
      })
    ))

  it.effect("at least once (opt-in at start): submits again and the task ends", () =>
    run(
      { schedule: Schedule.spaced("1 second") },
      Effect.gen(function*() {
        const video = yield* VideoWorkflow.generate(request, { key: "paid-2", submission: "at-least-once" })
        expect(video.videoUrl).toContain(video.taskId)
        expect(yield* requestsTo("/chat/completions")).toHaveLength(2)
      })
    ))

  it.effect("at least once (the runner's default): submits again and the task ends", () =>
    run(
      { schedule: Schedule.spaced("1 second"), submission: "at-least-once" },
      Effect.gen(function*() {
        const video = yield* VideoWorkflow.generate(request, { key: "paid-3" })
        expect(video.videoUrl).toContain(video.taskId)
        expect(yield* requestsTo("/chat/completions")).toHaveLength(2)
      })
    ))
})
