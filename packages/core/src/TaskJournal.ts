/**
 * A record of submitted video tasks that have not ended yet, over
 * `@effect/platform`'s `KeyValueStore`, so a restarted process resumes its
 * tasks instead of losing them or submitting them again.
 *
 * @since 0.1.0
 */
import * as KeyValueStore from "@effect/platform/KeyValueStore"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { JournalError } from "./SwitchboardError.js"

/**
 * @since 0.1.0
 * @category models
 */
export const Entry = Schema.Struct({
  taskId: Schema.String,
  model: Schema.String,
  /** The prompt's first 200 characters, to tell tasks apart. */
  prompt: Schema.String,
  /** Epoch milliseconds. */
  submittedAt: Schema.Number
})
/**
 * @since 0.1.0
 * @category models
 */
export type Entry = typeof Entry.Type

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly record: (entry: Entry) => Effect.Effect<void, JournalError>
  readonly remove: (taskId: string) => Effect.Effect<void, JournalError>
  readonly list: Effect.Effect<ReadonlyArray<Entry>, JournalError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class TaskJournal extends Context.Tag("@switchboard/core/TaskJournal")<TaskJournal, Service>() {}

/** All entries live under one key: a `KeyValueStore` cannot list its keys. */
const key = "switchboard-video-tasks"
const Entries = Schema.parseJson(Schema.Array(Entry))
const decodeEntries = Schema.decodeEither(Entries)
const encodeEntries = Schema.encodeSync(Entries)

const journalError = (action: string) => (cause: unknown) =>
  new JournalError({ message: `task journal could not ${action}: ${cause instanceof Error ? cause.message : String(cause)}` })

/**
 * Builds the journal on the `KeyValueStore` in context. Writes are
 * serialised, so concurrent submissions never overwrite each other.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const store = yield* KeyValueStore.KeyValueStore
  const lock = yield* Effect.makeSemaphore(1)

  const list = store.get(key).pipe(
    Effect.mapError(journalError("be read")),
    Effect.flatMap(Option.match({
      onNone: () => Effect.succeed<ReadonlyArray<Entry>>([]),
      onSome: (text) => Effect.mapError(decodeEntries(text), journalError("be decoded"))
    }))
  )

  const update = (action: string, f: (entries: ReadonlyArray<Entry>) => ReadonlyArray<Entry>) =>
    lock.withPermits(1)(
      Effect.flatMap(list, (entries) => Effect.mapError(store.set(key, encodeEntries(f(entries))), journalError(action)))
    )

  return TaskJournal.of({
    list,
    record: (entry) => update("record a task", (entries) => [...entries.filter((e) => e.taskId !== entry.taskId), entry]),
    remove: (taskId) => update("remove a task", (entries) => entries.filter((e) => e.taskId !== taskId))
  })
})

/**
 * The journal over a `KeyValueStore` you provide (a file-backed one in
 * `@switchboard/node`, `localStorage` in `@switchboard/browser`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<TaskJournal, never, KeyValueStore.KeyValueStore> = Layer.effect(TaskJournal, make)

/**
 * A journal in memory: tasks are tracked within one process only.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TaskJournal> = layer.pipe(Layer.provide(KeyValueStore.layerMemory))
