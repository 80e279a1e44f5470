import * as TaskJournal from "@switchboard/core/TaskJournal"
import { NodeSwitchboard } from "@switchboard/node"
import { Cluster, VideoWorkflow } from "@switchboard/workflow"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

// A runner: the workflow registered, over the SDK (Videos) and an engine
// whose state is in a sqlite file (the runner is its own client). The
// workflow keeps each task in that file, and removes it from the SDK's
// journal once stored there: that journal can stay in memory.
const Runner = VideoWorkflow.layer({ schedule: Schedule.spaced("1 second"), deadline: "30 minutes" }).pipe(
  Layer.provideMerge(Cluster.layerRunner({ database: { _tag: "Sqlite", filename: "tasks.sqlite" } })),
  Layer.provide(NodeSwitchboard.layerConfig({ journal: TaskJournal.layerMemory }))
)

const program = Effect.gen(function*() {
  const request = { model: "video-1", prompt: "a fox" }
  const video = yield* VideoWorkflow.generate(request, { key: "order-1234" })
  // One key, one task: starting again joins the first (here, long finished).
  const again = yield* VideoWorkflow.generate(request, { key: "order-1234" })
  yield* Console.log(video.videoUrl.endsWith(`/files/${video.taskId}.mp4`), again.taskId === video.taskId)
  // Anyone with an engine can look a workflow up by its key.
  const result = yield* VideoWorkflow.result("order-1234")
  yield* Console.log(result?._tag)
})

await program.pipe(Effect.provide(Runner), Effect.runPromise)
