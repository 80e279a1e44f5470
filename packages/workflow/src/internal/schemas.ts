/**
 * Schemas of what the workflows store: every `SwitchboardError` (an
 * activity's or a workflow's failure is written to storage and read back on
 * any runner) and one observation of a video task.
 *
 * @internal
 */
import * as E from "@switchboard/core/SwitchboardError"
import * as Schema from "effect/Schema"

/** Every `SwitchboardError`, so a failure read back from storage keeps its class. */
export const SwitchboardError = Schema.Union(E.errorClasses)

/** `TaskPoller.TaskUpdate` as a schema: the result of one status activity. */
export const TaskUpdate = Schema.Union([
  Schema.TaggedStruct("InProgress", {
    taskId: Schema.String,
    status: Schema.String,
    progress: Schema.optional(Schema.Number)
  }),
  Schema.TaggedStruct("Succeeded", { taskId: Schema.String, videoUrl: Schema.String }),
  Schema.TaggedStruct("Failed", {
    taskId: Schema.String,
    reason: Schema.optional(Schema.String),
    body: Schema.optional(Schema.String)
  })
])
