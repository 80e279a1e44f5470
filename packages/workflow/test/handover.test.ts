/**
 * A workflow's run lets its shard go while it waits on a step (a video
 * poll, an agent's model or tool call), not only between steps. On
 * effect/cluster, an activity whose request this runner claimed just before
 * handing the shard over may never be served here (effect leaves its caller
 * waiting on a runner that keeps running), and the old owner waits for the
 * run before releasing the shard: seen in the fleet join test
 * (`join.processes.test.ts`) as a task nobody polled again, its shard held
 * by its old owner. Here, on the in-memory engine with a sharding that says
 * whether the shard is this runner's: a call that never answers stands for
 * the reply that never comes; the shard is handed over while the run waits
 * on it. Over real HTTP to the emulator, on the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Videos from "@switchboard/core/Videos"
import * as Cause from "effect/Cause"
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import * as EntityAddress from "effect/cluster/EntityAddress"
import * as EntityId from "effect/cluster/EntityId"
import * as EntityType from "effect/cluster/EntityType"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardId from "effect/cluster/ShardId"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/testing/TestClock"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Schema from "effect/Schema"
import { AgentWorkflow, VideoWorkflow } from "../src/index.js"
import { handoverCheck } from "../src/internal/handover.js"
import { drive, emulated } from "./fixtures.js"

const model = "video-1"
const shardId = ShardId.make("default", 7)

/** What a workflow reads of effect/cluster: its shard, held by this runner while `owned()`. */
const placed = (owned: () => boolean) => {
  const sharding: Pick<Sharding.Sharding["Service"], "hasShardId"> = { hasShardId: (id) => id === shardId && owned() }
  return Layer.mergeAll(
    Layer.succeed(Sharding.Sharding, sharding as Sharding.Sharding["Service"]),
    Layer.succeed(
      Entity.CurrentAddress,
      EntityAddress.make({ shardId, entityType: EntityType.make("Workflow/Test"), entityId: EntityId.make("run") })
    )
  )
}

/**
 * The workflow on the in-memory engine, placed on `shardId` of a sharding
 * that holds it while `owned()`: what the workflow reads of effect/cluster.
 * `status` replaces the status call.
 */
const setup = (
  owned: () => boolean,
  status: (videos: Videos.Videos["Service"], taskId: string) => ReturnType<Videos.Videos["Service"]["status"]>
) => {
  return VideoWorkflow.layer({ schedule: Schedule.spaced("2 seconds") }).pipe(
    Layer.provide(placed(owned)),
    Layer.provideMerge(WorkflowEngine.layerMemory),
    Layer.provideMerge(
      Layer.effect(Videos.Videos, Effect.map(Videos.Videos, (videos) => ({ ...videos, status: (taskId: string) => status(videos, taskId) })))
    ),
    Layer.provideMerge(emulated())
  )
}

const isAbandoned = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some((reason) => Cause.isInterruptReason(reason) && reason.annotations.has(ClusterSchema.Abandon.key))

describe("a workflow run handed over while it waits on a step", () => {
  it.effect("a video workflow's run waiting on a poll ends abandoned once the shard is no longer this runner's: its next owner replays it", () =>
    Effect.gen(function*() {
      let owned = true
      const parked = yield* Deferred.make<void>()
      // The first poll's reply never comes.
      const never = Effect.andThen(Deferred.succeed(parked, undefined), Effect.never)
      yield* Effect.gen(function*() {
        // On the in-memory engine, the run is the caller's.
        const run = yield* Effect.forkChild(VideoWorkflow.generate({ model, prompt: "a fox in the snow" }))
        yield* Deferred.await(parked)
        owned = false
        yield* TestClock.adjust(handoverCheck)
        // Without the check while a poll is waited for, the run waits on.
        const exit = yield* Fiber.await(run)
        expect(Exit.isFailure(exit) && isAbandoned(exit.cause)).toBe(true)
      }).pipe(Effect.provide(setup(() => owned, () => never)))
    }))

  it.effect("a video workflow polls to the end while the shard stays this runner's", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(VideoWorkflow.generate({ model, prompt: "a heron at dawn" }))
      const video = yield* drive(fiber)
      expect(video.videoUrl).toMatch(new RegExp(`${video.taskId}`))
    }).pipe(Effect.provide(setup(() => true, (videos, taskId) => videos.status(taskId)))))

  it.effect("an agent's run waiting on a tool call ends abandoned once the shard is no longer this runner's", () =>
    Effect.gen(function*() {
      let owned = true
      const parked = yield* Deferred.make<void>()
      const GetTime = Tool.make("get_time", {
        description: "Local time in a time zone",
        parameters: Schema.Struct({ zone: Schema.String.annotate({ description: "IANA zone" }) }),
        success: Schema.String
      })
      const toolkit = Toolkit.make(GetTime)
      const agent = AgentWorkflow.make({ name: "HandoverAgent", toolkit })
      // The tool call's result never comes.
      const handlers = toolkit.toLayer({ get_time: () => Effect.andThen(Deferred.succeed(parked, undefined), Effect.never) })
      const layer = agent.layer.pipe(
        Layer.provide([handlers, placed(() => owned)]),
        Layer.provideMerge(WorkflowEngine.layerMemory),
        Layer.provideMerge(emulated())
      )
      yield* Effect.gen(function*() {
        const run = yield* Effect.forkChild(agent.run("handover-1", "gpt-4o-mini", [{ role: "user", content: `Use get_time({"zone": "Europe/Paris"})` }]))
        yield* Deferred.await(parked)
        owned = false
        yield* TestClock.adjust(handoverCheck)
        const exit = yield* Fiber.await(run)
        expect(Exit.isFailure(exit) && isAbandoned(exit.cause)).toBe(true)
      }).pipe(Effect.provide(layer))
    }))
})
