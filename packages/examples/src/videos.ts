import { Videos } from "@switchboard/core"
import { NodeMedia, NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

const program = Effect.gen(function*() {
  const taskId = yield* Videos.submit({ model: "video-1", prompt: "Waves at sunrise" }, { output: "./out" })
  // Poll to the end, showing each update; save the video into ./out as
  // <task id>.mp4; only then does the task leave the journal.
  const path = yield* NodeMedia.finishVideo(taskId, {
    onUpdate: (update) => Console.log(update._tag === "InProgress" ? `${update.status} ${update.progress ?? ""}` : update._tag)
  })
  // Or in one go: the succeeded update (the task is then completed), or
  // TaskFailedError / TaskTimeoutError.
  const done = yield* Videos.generate({ model: "video-1", prompt: "A paper boat", image: "https://example.com/boat.png" })
  const saved = yield* NodeMedia.save(done.videoUrl, "./out/boat.mp4")
  yield* Console.log(`saved ${path.replace(taskId, "<task id>")} and ${saved}`)
})

const Switchboard = NodeSwitchboard.layerConfig({
  journalDirectory: ".switchboard/tasks", // the CLI's journal here (default: the user's state directory)
  pollSchedule: Schedule.spaced("500 millis") // the default backs off from 1 s to 15 s
})

await program.pipe(Effect.provide(Layer.merge(Switchboard, NodeMedia.layer)), Effect.runPromise)
