/**
 * What one poll of a video workflow costs the engine (issue 29, case 4):
 * every activity is a message and a reply written to the cluster's storage,
 * so a poll should be one activity, its short wait inside it, not a status
 * activity and a clock activity. In-memory engine, TestClock, the emulator
 * over real HTTP; each activity is seen by its span (named as the activity).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Videos from "@switchboard/core/Videos"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { recordingSpans } from "@switchboard/emulator/RecordingTracer"
import { VideoWorkflow } from "../src/index.js"
import { drive, emulated } from "./fixtures.js"

describe("VideoWorkflow: one activity per poll", () => {
  it.effect("a task polled 3 times, 2 s apart: 3 status activities and no clock activity, the polls still 2 s apart", () =>
    Effect.gen(function*() {
      const times = yield* Ref.make<ReadonlyArray<number>>([])
      const timed = Layer.effect(
        Videos.Videos,
        Effect.map(Videos.Videos, (videos) => ({
          ...videos,
          status: (taskId: string) =>
            Effect.andThen(Effect.flatMap(Clock.currentTimeMillis, (at) => Ref.update(times, (all) => [...all, at])), videos.status(taskId))
        }))
      )
      const layer = VideoWorkflow.layer({ schedule: Schedule.spaced("2 seconds") }).pipe(
        Layer.provideMerge(WorkflowEngine.layerMemory),
        Layer.provideMerge(timed),
        Layer.provideMerge(emulated())
      )
      const { result, spans } = yield* recordingSpans(
        Effect.flatMap(Effect.forkChild(VideoWorkflow.generate({ model: "video-1", prompt: "a fox in the snow" })), drive).pipe(
          Effect.provide(layer)
        )
      )
      expect(result._tag).toBe("Success")
      // The emulator answers two in-progress polls before the end.
      expect(yield* Ref.get(times)).toEqual([0, 2000, 4000])
      const activities = spans.map((span) => span.name).filter((name) => /^(submit|status-|DurableClock\/)/.test(name))
      expect(activities).toEqual(["submit-intent", "submit", "status-0", "status-1", "status-2"])
    }))
})
