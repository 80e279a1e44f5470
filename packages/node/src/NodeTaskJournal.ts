/**
 * A task journal in a directory, safe for several processes of one machine
 * sharing it: one file per task, each written to a temporary file of a name
 * no other writer uses and renamed into place, so a crash mid-write leaves
 * the previous record intact, never a half-written one. Claims are created
 * with `link`, which fails when the file exists, so only one process gets
 * each. Temporary files of processes that are gone are removed on opening.
 *
 * Not for a directory shared between machines (a network file system): see
 * `docs/videos.md`.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { JournalError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Os from "node:os"
import * as NodePathModule from "node:path"

const recordExtension = ".json"
const temporaryExtension = ".tmp"
const legacyFile = `switchboard-video-tasks${recordExtension}`
const quarantineDirectory = "quarantine"

let writes = 0

/** `<pid>.<counter>.<random>`: unique among the processes and fibers writing one directory. */
const uniqueSuffix = () => `${process.pid}.${++writes}.${TaskJournal.randomId()}`

/** The pid in a temporary file's name, `<name>.<pid>.<counter>.<random>.tmp`. */
const pidOfTemporary = (name: string): number | undefined => {
  const match = /\.(\d+)\.\d+\.[a-z0-9]+\.tmp$/.exec(name)
  return match ? Number(match[1]) : undefined
}

/**
 * Whether a process of this machine runs with `pid` (a signal 0 probe:
 * EPERM means it runs under another user).
 *
 * @since 0.1.0
 * @category processes
 */
export const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: string }).code === "EPERM"
  }
}

const failure = (action: string) => (error: unknown) =>
  new JournalError({ message: `task journal could not ${action}: ${error instanceof Error ? error.message : String(error)}` })

const isAlreadyExists = (error: unknown) =>
  typeof error === "object" && error !== null && (error as { reason?: string }).reason === "AlreadyExists"
const isNotFound = (error: unknown) =>
  typeof error === "object" && error !== null && (error as { reason?: string }).reason === "NotFound"

/**
 * The `Storage` of a journal in `directory` (created if missing). Opening it
 * removes the temporary files of writers that are gone.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeStorage = (directory: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    yield* Effect.mapError(fs.makeDirectory(directory, { recursive: true }), failure(`create ${directory}`))
    const fileOf = (key: string) => path.join(directory, `${encodeURIComponent(key)}${recordExtension}`)
    const host = Os.hostname()
    const owner: TaskJournal.Owner = { id: TaskJournal.randomId(), pid: process.pid, host }

    const names = Effect.mapError(fs.readDirectory(directory), failure(`list ${directory}`))

    /** Writes `value` to a temporary file only this call uses, then `commit`s it; the temporary file never stays. */
    const viaTemporary = <A, E>(file: string, value: string, commit: (temporary: string) => Effect.Effect<A, E>) => {
      const temporary = `${file}.${uniqueSuffix()}${temporaryExtension}`
      return fs.writeFileString(temporary, value).pipe(
        Effect.zipRight(commit(temporary)),
        Effect.ensuring(Effect.ignore(fs.remove(temporary, { force: true })))
      )
    }

    const read = (key: string) =>
      fs.readFileString(fileOf(key)).pipe(
        Effect.map(Option.some),
        Effect.catchIf(isNotFound, () => Effect.succeed(Option.none())),
        Effect.mapError(failure(`read ${key}`))
      )

    const removeFile = (file: string) => Effect.mapError(fs.remove(file, { force: true }), failure(`remove ${file}`))

    // Temporary files of processes that are gone: what a kill -9 mid-write leaves.
    yield* Effect.flatMap(names, (all) =>
      Effect.forEach(
        all.filter((name) => name.endsWith(temporaryExtension)),
        (name) => {
          const pid = pidOfTemporary(name)
          return pid === undefined || !isRunning(pid) ? Effect.ignore(fs.remove(path.join(directory, name))) : Effect.void
        },
        { discard: true }
      ))

    return {
      keys: Effect.map(names, (all) =>
        all.filter((name) => name.endsWith(recordExtension) && name !== legacyFile).map((name) =>
          decodeURIComponent(name.slice(0, -recordExtension.length))
        )),
      read,
      write: (key, value) =>
        Effect.mapError(viaTemporary(fileOf(key), value, (temporary) => fs.rename(temporary, fileOf(key))), failure(`write ${key}`)),
      create: (key, value) =>
        viaTemporary(fileOf(key), value, (temporary) => fs.link(temporary, fileOf(key))).pipe(
          Effect.as(true),
          Effect.catchIf(isAlreadyExists, () => Effect.succeed(false)),
          Effect.mapError(failure(`create ${key}`))
        ),
      removeIf: (key, expected) =>
        Effect.gen(function*() {
          // Moved aside first, so only one process removes it; what was moved
          // is compared, and put back if it changed meanwhile.
          const aside = `${fileOf(key)}.${uniqueSuffix()}${temporaryExtension}`
          const moved = yield* fs.rename(fileOf(key), aside).pipe(
            Effect.as(true),
            Effect.catchIf(isNotFound, () => Effect.succeed(false))
          )
          if (!moved) return false
          const text = yield* fs.readFileString(aside)
          if (text !== expected) yield* Effect.ignore(fs.link(aside, fileOf(key)))
          yield* fs.remove(aside, { force: true })
          return text === expected
        }).pipe(Effect.mapError(failure(`remove ${key}`))),
      remove: (key) => removeFile(fileOf(key)),
      quarantine: (key) =>
        Effect.gen(function*() {
          const target = path.join(directory, quarantineDirectory, `${encodeURIComponent(key)}.${uniqueSuffix()}${recordExtension}`)
          yield* fs.makeDirectory(path.dirname(target), { recursive: true })
          yield* fs.rename(fileOf(key), target)
          return target
        }).pipe(Effect.mapError(failure(`set ${key} aside`))),
      owner,
      isAlive: (other) => (other.host === host && other.pid !== undefined ? isRunning(other.pid) : undefined),
      shared: true,
      legacy: {
        read: read("switchboard-video-tasks"),
        remove: removeFile(path.join(directory, legacyFile))
      }
    } satisfies TaskJournal.Storage
  })

/**
 * The task journal kept in `directory` (created if missing).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (directory: string): Layer.Layer<TaskJournal.TaskJournal, JournalError> =>
  TaskJournal.layer(makeStorage(directory)).pipe(
    // The file system and paths alone: `NodeContext` would also load the
    // command executor, terminal and workers at start.
    Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
  )

/**
 * Where this user's state lives, by the platform's convention: on Linux
 * and other Unixes `$XDG_STATE_HOME` (when absolute) else `~/.local/state`;
 * on macOS `~/Library/Application Support`; on Windows `%LOCALAPPDATA%`
 * else `~/AppData/Local`.
 *
 * @since 0.1.0
 * @category directories
 */
export const stateDirectory = (
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
  home: string = Os.homedir()
): string => {
  const paths = platform === "win32" ? NodePathModule.win32 : NodePathModule.posix
  if (platform === "win32") return env["LOCALAPPDATA"] || paths.join(home, "AppData", "Local")
  if (platform === "darwin") return paths.join(home, "Library", "Application Support")
  const xdg = env["XDG_STATE_HOME"]
  return xdg !== undefined && paths.isAbsolute(xdg) ? xdg : paths.join(home, ".local", "state")
}

/**
 * The journal directory of `NodeSwitchboard.layerConfig`:
 * `SWITCHBOARD_JOURNAL_DIR` (the variable the CLI reads too) when set and
 * not empty, else `switchboard/tasks` under `stateDirectory()`.
 *
 * @since 0.1.0
 * @category directories
 */
export const defaultDirectory: Config.Config<string> = Config.string("SWITCHBOARD_JOURNAL_DIR").pipe(
  Config.withDefault(""),
  Config.map((directory) => directory === "" ? NodePathModule.join(stateDirectory(), "switchboard", "tasks") : directory)
)

/**
 * The journal in `directory`, opened (the directory created) at its first
 * use rather than when the layer is built: a program that never submits a
 * video never touches the disk, and one whose directory cannot be made
 * hears it as a `JournalError` from `Videos.submit`, before anything is
 * sent. A failed opening is tried again at the next use.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerOnFirstUse = (directory: string): Layer.Layer<TaskJournal.TaskJournal> =>
  Layer.effect(
    TaskJournal.TaskJournal,
    Effect.gen(function*() {
      const lock = yield* Effect.makeSemaphore(1)
      let opened: TaskJournal.Service | undefined
      const open = lock.withPermits(1)(Effect.suspend(() =>
        opened !== undefined ? Effect.succeed(opened) : Effect.flatMap(
          Effect.provide(makeStorage(directory), Layer.merge(NodeFileSystem.layer, NodePath.layer)),
          (storage) => Effect.tap(TaskJournal.make(storage), (service) => (opened = service))
        )
      ))
      const use = <A, E, R>(f: (service: TaskJournal.Service) => Effect.Effect<A, E, R>) => Effect.flatMap(open, f)
      return {
        check: use((s) => s.check),
        record: (entry) => use((s) => s.record(entry)),
        get: (taskId) => use((s) => s.get(taskId)),
        remove: (taskId) => use((s) => s.remove(taskId)),
        scan: use((s) => s.scan),
        list: use((s) => s.list),
        claim: (taskId) => use((s) => s.claim(taskId))
      } satisfies TaskJournal.Service
    })
  )
