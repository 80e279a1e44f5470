/**
 * A task journal in a directory: each write goes to a temporary file that is
 * then renamed over the old one, so a crash mid-write leaves the previous
 * journal intact, never a half-written one.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as KeyValueStore from "@effect/platform/KeyValueStore"
import * as Path from "@effect/platform/Path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { JournalError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * A `KeyValueStore` of one file per key in `directory`, written atomically
 * (temporary file + rename).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeStore = (directory: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* fs.makeDirectory(directory, { recursive: true })
    const fileOf = (key: string) => path.join(directory, `${encodeURIComponent(key)}.json`)
    const keys = Effect.map(fs.readDirectory(directory), (names) => names.filter((name) => name.endsWith(".json")))

    return KeyValueStore.makeStringOnly({
      get: (key) =>
        Effect.flatMap(fs.exists(fileOf(key)), (exists) =>
          exists ? Effect.map(fs.readFileString(fileOf(key)), Option.some) : Effect.succeed(Option.none())),
      set: (key, value) => {
        const file = fileOf(key)
        const temporary = `${file}.${process.pid}.${Date.now()}.tmp`
        return fs.writeFileString(temporary, value).pipe(
          Effect.zipRight(fs.rename(temporary, file)),
          Effect.onError(() => Effect.ignore(fs.remove(temporary)))
        )
      },
      remove: (key) => fs.remove(fileOf(key), { force: true }),
      clear: Effect.flatMap(keys, (names) => Effect.forEach(names, (name) => fs.remove(path.join(directory, name)), { discard: true })),
      size: Effect.map(keys, (names) => names.length)
    })
  })

/**
 * The task journal kept in `directory` (created if missing).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (directory: string): Layer.Layer<TaskJournal.TaskJournal, JournalError> =>
  TaskJournal.layer.pipe(
    Layer.provide(
      Layer.effect(
        KeyValueStore.KeyValueStore,
        Effect.mapError(
          makeStore(directory),
          (e) => new JournalError({ message: `task journal directory ${directory} is unusable: ${e.message}` })
        )
      )
    ),
    // The file system and paths alone: `NodeContext` would also load the
    // command executor, terminal and workers at start.
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )
