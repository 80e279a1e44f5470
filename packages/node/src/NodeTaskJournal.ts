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
import { JournalError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as PlatformError from "effect/PlatformError"
import * as Semaphore from "effect/Semaphore"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePathModule from "node:path"
import * as Platform from "./internal/platform.js"

const recordExtension = ".json"
const temporaryExtension = ".tmp"
const legacyFile = `switchboard-video-tasks${recordExtension}`
const quarantineDirectory = "quarantine"
/** A temporary file this old is left by a writer that is gone, whoever it was: a write takes milliseconds. */
const abandonedAfterMillis = 60 * 60 * 1000

/**
 * Whether a process of this process table runs with `pid` (a signal 0
 * probe: EPERM means it runs under another user).
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

interface ProcessTable {
  readonly bootId?: string
  readonly pidNamespace?: string
  /** A short tag of it for temporary file names; empty when it is unknown. */
  readonly tag: string
}

let table: ProcessTable | undefined

/**
 * This process table: the kernel's boot and the PID namespace (Linux only;
 * elsewhere none). Read at the first journal use, not at import: most
 * programs that import `@switchboard/node` never open a journal.
 */
const processTable = (): ProcessTable => {
  if (table !== undefined) return table
  try {
    const bootId = Fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
    const pidNamespace = Fs.readlinkSync("/proc/self/ns/pid")
    const tag = Crypto.createHash("sha256").update(`${bootId} ${pidNamespace}`).digest("hex").slice(0, 12)
    table = { bootId, pidNamespace, tag }
  } catch {
    table = { tag: "" }
  }
  return table
}

/**
 * This process as a claim names it: a random id, its pid and host, and on
 * Linux its process table (boot id and PID namespace).
 *
 * @since 0.1.0
 * @category processes
 */
export const makeOwner = (): TaskJournal.Owner => {
  const { bootId, pidNamespace } = processTable()
  return { id: TaskJournal.randomId(), pid: process.pid, host: Os.hostname(), ...(bootId === undefined ? {} : { bootId, pidNamespace }) }
}

/**
 * Whether a claim's owner still runs: probed by its pid only when it ran in
 * this process table (same boot, same PID namespace), else `undefined` (its
 * claim then waits for its expiry). Two containers sharing a host name do
 * not share pids.
 *
 * @since 0.1.0
 * @category processes
 */
export const isAlive = (other: TaskJournal.Owner): boolean | undefined => {
  const { bootId, pidNamespace } = processTable()
  return other.pid !== undefined && bootId !== undefined && other.bootId === bootId && other.pidNamespace === pidNamespace
    ? isRunning(other.pid)
    : undefined
}

let writes = 0

/** `<pid>-<table>.<counter>.<random>`: unique among the processes and fibers writing one directory. */
const uniqueSuffix = () => `${process.pid}-${processTable().tag}.${++writes}.${TaskJournal.randomId()}`

/** Whether a temporary file `<name>.<pid>-<table>.<counter>.<random>.tmp` is of a process of this table that is gone. */
const isOfGoneProcess = (name: string): boolean => {
  const match = /\.(\d+)-([0-9a-f]*)\.\d+\.[a-z0-9]+\.tmp$/.exec(name)
  const { tag } = processTable()
  return match !== null && tag !== "" && match[2] === tag && !isRunning(Number(match[1]))
}

const loneSurrogate = /(\p{Surrogate})/u

/** `c` as `%XX`. */
const escaped = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`

/**
 * The file name (without extension) of a key: `encodeURIComponent`, with
 * upper-case letters and `*` escaped too (`%41`, `%2A`), and a lone
 * surrogate (valid in a JSON string, not in UTF-8) as `%uD800`. Total,
 * reversed by `keyOfName`, and case-safe: two keys never get names that
 * differ only in case, which a case-insensitive file system (macOS,
 * Windows) would take for one file; Windows refuses `*` in a name.
 *
 * @since 0.1.0
 * @category file names
 */
export const nameOfKey = (key: string): string =>
  key.split(loneSurrogate).map((part, i) =>
    i % 2 === 1
      ? `%u${part.charCodeAt(0).toString(16).toUpperCase()}`
      : encodeURIComponent(part).replace(/%[0-9A-F]{2}|[A-Z*]/g, (c) => (c.length === 1 ? escaped(c) : c))
  ).join("")

/** The key of a name of an earlier version, `encodeURIComponent` alone (letters in either case, `*` as is). */
const keyOfEarlierName = (name: string): string | undefined => {
  try {
    const key = decodeURIComponent(name)
    return encodeURIComponent(key) === name ? key : undefined
  } catch {
    return undefined
  }
}

/**
 * The key a file name stands for; `undefined` when the name is not one
 * `nameOfKey` makes (a file the journal did not write).
 *
 * @since 0.1.0
 * @category file names
 */
export const keyOfName = (name: string): string | undefined => {
  try {
    const key = name.split(/(%u[0-9A-F]{4})/).map((part, i) =>
      i % 2 === 1 ? String.fromCharCode(parseInt(part.slice(2), 16)) : decodeURIComponent(part)
    ).join("")
    return nameOfKey(key) === name ? key : undefined
  } catch {
    return undefined
  }
}

/**
 * Longest name a record is kept under as it is. A longer one (a very long
 * task id: file systems take at most 255 bytes, the temporary file's suffix
 * included) is the key's hash, and the file starts with the key.
 */
const maxPlainName = 160
/** Starts a hashed name: `nameOfKey` never makes `%h` (its `%` starts `%XX` or `%uXXXX`). */
const hashedMark = "%h"

/** Where a key's record is: its file name, and the line its file starts with ("" for a plain name). */
const placementOf = (key: string): { readonly name: string; readonly header: string } => {
  const plain = nameOfKey(key)
  if (plain.length <= maxPlainName) return { name: plain, header: "" }
  return { name: hashedMark + Crypto.createHash("sha256").update(key).digest("hex"), header: `${JSON.stringify(key)}\n` }
}

/** The key a hashed record's text starts with, when it is the key of `name`. */
const keyOfHashed = (name: string, text: string): string | undefined => {
  try {
    const key: unknown = JSON.parse(text.slice(0, text.indexOf("\n")))
    return typeof key === "string" && placementOf(key).name === name ? key : undefined
  } catch {
    return undefined
  }
}

const failure = TaskJournal.failure

const isAlreadyExists = (error: unknown) => PlatformError.isPlatformError(error) && error.reason._tag === "AlreadyExists"
const isNotFound = (error: unknown) => PlatformError.isPlatformError(error) && error.reason._tag === "NotFound"

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
    const fileOf = (key: string) => path.join(directory, `${placementOf(key).name}${recordExtension}`)

    const names = Effect.mapError(fs.readDirectory(directory), failure(`list ${directory}`))
    const recordNames = Effect.map(names, (all) => all.filter((name) => name.endsWith(recordExtension) && name !== legacyFile))
    const keyOf = (name: string) => keyOfName(name.slice(0, -recordExtension.length))
    /** The key of the record file `name`; a hashed one's is read from the file. */
    const keyOfFile = (name: string): Effect.Effect<string | undefined> =>
      name.startsWith(hashedMark)
        ? fs.readFileString(path.join(directory, name)).pipe(
          Effect.map((text) => keyOfHashed(name.slice(0, -recordExtension.length), text)),
          Effect.orElseSucceed(() => undefined)
        )
        : Effect.succeed(keyOf(name))

    /** Moves `file` into the quarantine directory, as `<name>.<unique>.json`. */
    const setAside = (file: string, name: string) =>
      Effect.gen(function*() {
        const target = path.join(directory, quarantineDirectory, `${name}.${uniqueSuffix()}${recordExtension}`)
        yield* fs.makeDirectory(path.dirname(target), { recursive: true })
        yield* fs.rename(file, target)
        return target
      })

    /** Writes `value` to a temporary file only this call uses, then `commit`s it; the temporary file never stays. */
    const viaTemporary = <A, E>(file: string, value: string, commit: (temporary: string) => Effect.Effect<A, E>) => {
      const temporary = `${file}.${uniqueSuffix()}${temporaryExtension}`
      return fs.writeFileString(temporary, value).pipe(
        Effect.andThen(commit(temporary)),
        Effect.ensuring(Effect.ignore(fs.remove(temporary, { force: true })))
      )
    }

    /**
     * Holds `size` bytes in a temporary file (removed with the scope, or as
     * any temporary file of a process that is gone); `fill` writes the record
     * into it in place, cuts it to length and renames it into place, so the
     * record needs no block the reservation did not take.
     */
    const reserve = (size: number) =>
      Effect.gen(function*() {
        const file = path.join(directory, `reserved.${uniqueSuffix()}${temporaryExtension}`)
        yield* Effect.acquireRelease(
          Effect.mapError(fs.writeFile(file, new Uint8Array(size).fill(0x20)), failure("reserve room for a record")),
          () => Effect.ignore(fs.remove(file, { force: true }))
        )
        const fill = (key: string, value: string) => {
          const bytes = new TextEncoder().encode(placementOf(key).header + value)
          return Effect.scoped(Effect.gen(function*() {
            const handle = yield* fs.open(file, { flag: "r+" })
            yield* handle.writeAll(bytes)
            yield* handle.truncate(bytes.length)
            yield* handle.sync
          })).pipe(Effect.andThen(fs.rename(file, fileOf(key))), Effect.mapError(failure(`write ${key}`)))
        }
        return { fill } satisfies TaskJournal.Reserved
      })

    const read = (key: string) =>
      fs.readFileString(fileOf(key)).pipe(
        Effect.map((text) => {
          const { header } = placementOf(key)
          return text.startsWith(header) ? Option.some(text.slice(header.length)) : Option.none()
        }),
        Effect.catchIf(isNotFound, () => Effect.succeed(Option.none())),
        Effect.mapError(failure(`read ${key}`))
      )

    const removeFile = (file: string) => Effect.mapError(fs.remove(file, { force: true }), failure(`remove ${file}`))

    // Temporary files of processes that are gone: what a kill -9 mid-write
    // leaves. A pid is probed only in this process table; another's
    // temporary file (another container) is removed once abandoned.
    const isAbandoned = (file: string) =>
      Effect.map(fs.stat(file), (info) => Option.exists(info.mtime, (at) => Date.now() - at.getTime() > abandonedAfterMillis))
    yield* Effect.flatMap(names, (all) =>
      Effect.forEach(
        all.filter((name) => name.endsWith(temporaryExtension)),
        (name) => {
          const file = path.join(directory, name)
          const gone = isOfGoneProcess(name) ? Effect.succeed(true) : isAbandoned(file)
          return Effect.ignore(Effect.flatMap(gone, (yes) => (yes ? fs.remove(file) : Effect.void)))
        },
        { discard: true }
      ))

    // Records an earlier version named by `encodeURIComponent` alone take
    // today's name (`link`: a record already there is newer and stays).
    yield* Effect.flatMap(recordNames, (all) =>
      Effect.forEach(all, (name) => {
        const key = keyOf(name) === undefined ? keyOfEarlierName(name.slice(0, -recordExtension.length)) : undefined
        if (key === undefined) return Effect.void
        const file = path.join(directory, name)
        return Effect.ignore(fs.link(file, fileOf(key)).pipe(
          Effect.catchIf(isAlreadyExists, () => Effect.void),
          Effect.andThen(fs.remove(file))
        ))
      }, { discard: true }))

    /**
     * Why `name` is no record: a name the journal never writes, or not a file
     * (a directory fails every read; reading a FIFO waits for a writer forever).
     */
    const whyStray = (name: string): Effect.Effect<Option.Option<string>> =>
      fs.stat(path.join(directory, name)).pipe(
        Effect.flatMap((info) =>
          info.type !== "File"
            ? Effect.succeed(Option.some(`not a file (${info.type})`))
            : Effect.map(keyOfFile(name), (key) => key === undefined ? Option.some("not a name the journal writes") : Option.none())
        ),
        // Gone meanwhile (completed), or unreadable: its read says so.
        Effect.orElseSucceed(() => Option.none())
      )

    return {
      keys: Effect.map(
        Effect.flatMap(recordNames, (all) => Effect.forEach(all, keyOfFile)),
        (keys) => keys.filter((key): key is string => key !== undefined)
      ),
      strays: Effect.flatMap(recordNames, (all) =>
        Effect.map(
          Effect.forEach(all, (name) =>
            Effect.flatMap(whyStray(name), Option.match({
              onNone: () => Effect.succeed(Option.none<TaskJournal.Quarantined>()),
              onSome: (message) =>
                setAside(path.join(directory, name), name).pipe(
                  Effect.map((movedTo) => Option.some<TaskJournal.Quarantined>({ key: name, movedTo, message })),
                  Effect.mapError(failure(`set ${name} aside`))
                )
            }))),
          (found) => found.flatMap(Option.toArray)
        )),
      read,
      reserve,
      write: (key, value) =>
        Effect.mapError(
          viaTemporary(fileOf(key), placementOf(key).header + value, (temporary) => fs.rename(temporary, fileOf(key))),
          failure(`write ${key}`)
        ),
      create: (key, value) =>
        viaTemporary(fileOf(key), placementOf(key).header + value, (temporary) => fs.link(temporary, fileOf(key))).pipe(
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
          const same = (yield* fs.readFileString(aside)) === placementOf(key).header + expected
          if (!same) yield* Effect.ignore(fs.link(aside, fileOf(key)))
          yield* fs.remove(aside, { force: true })
          return same
        }).pipe(Effect.mapError(failure(`remove ${key}`))),
      remove: (key) => removeFile(fileOf(key)),
      quarantine: (key) => Effect.mapError(setAside(fileOf(key), placementOf(key).name), failure(`set ${key} aside`)),
      owner: makeOwner(),
      isAlive,
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
    Layer.provide(Platform.fileSystemAndPath)
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
export const defaultDirectory: Config.Config<string> = Config.String("SWITCHBOARD_JOURNAL_DIR").pipe(
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
      const lock = yield* Semaphore.make(1)
      let opened: TaskJournal.Service | undefined
      const open = lock.withPermits(1)(Effect.suspend(() =>
        opened !== undefined ? Effect.succeed(opened) : Effect.flatMap(
          Effect.provide(makeStorage(directory), Platform.fileSystemAndPath),
          (storage) => Effect.map(TaskJournal.make(storage), (service) => (opened = service))
        )
      ))
      const use = <A, E, R>(f: (service: TaskJournal.Service) => Effect.Effect<A, E, R>) => Effect.flatMap(open, f)
      return {
        reserve: (draft) => use((s) => s.reserve(draft)),
        record: (entry) => use((s) => s.record(entry)),
        get: (taskId) => use((s) => s.get(taskId)),
        remove: (taskId) => use((s) => s.remove(taskId)),
        scan: use((s) => s.scan),
        list: use((s) => s.list),
        claim: (taskId) => use((s) => s.claim(taskId))
      } satisfies TaskJournal.Service
    })
  )
