/**
 * Node's file system and path services, loaded the first time a layer that
 * uses them is built: a process that never touches a file
 * (`NodeSwitchboard.layer` keeps its journal in memory) does not load
 * `@effect/platform-node-shared` when it imports the Node layer
 * (docs/decisions.md, "Cold start: the file system on first use").
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Path from "effect/Path"

/** `NodeFileSystem.layer`, imported when first built. */
export const fileSystem: Layer.Layer<FileSystem.FileSystem> = Layer.unwrap(
  Effect.map(Effect.promise(() => import("@effect/platform-node-shared/NodeFileSystem")), (module) => module.layer)
)

/** The file system and `NodePath.layer`, imported when first built. */
export const fileSystemAndPath: Layer.Layer<FileSystem.FileSystem | Path.Path> = Layer.merge(
  fileSystem,
  Layer.unwrap(Effect.map(Effect.promise(() => import("@effect/platform-node-shared/NodePath")), (module) => module.layer))
)
