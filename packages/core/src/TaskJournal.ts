/**
 * A record of submitted video tasks, one record per task, so a restarted
 * process resumes its tasks instead of losing them or submitting them again.
 *
 * The journal is built over a small `Storage` (a directory in
 * `@switchboard/node`, `localStorage` in `@switchboard/browser`, memory here):
 * each task is its own key, so writers never rewrite each other's records; a
 * record that cannot be decoded is moved aside, never in the way of the
 * others; and a process claims a task before it follows it, so two processes
 * resuming one journal poll each task once.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { JournalError } from "./SwitchboardError.js"

/**
 * A journal's record of one submitted task: its id, model, prompt, when it
 * was submitted and, once done, its video.
 *
 * @since 0.1.0
 * @category models
 */
export const Entry = Schema.Struct({
  taskId: Schema.NonEmptyString,
  model: Schema.String,
  /** The prompt's first 200 characters, to tell tasks apart. */
  prompt: Schema.String,
  /** Epoch milliseconds. */
  submittedAt: Schema.Number,
  /** Set when the task succeeded; the record stays until the caller completes it. */
  videoUrl: Schema.optional(Schema.String),
  /** Where the caller means to save the video (the CLI's output directory), so a resumed run saves there too. */
  output: Schema.optional(Schema.String)
})
/**
 * A journal's record of one submitted task: its id, model, prompt, when it
 * was submitted and, once done, its video.
 *
 * @since 0.1.0
 * @category models
 */
export type Entry = typeof Entry.Type

/**
 * A record that could not be decoded, moved aside to `movedTo`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Quarantined {
  readonly key: string
  readonly movedTo: string
  readonly message: string
}

/**
 * What a journal holds: the valid records, and the ones set aside by this read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Listing {
  readonly entries: ReadonlyArray<Entry>
  readonly quarantined: ReadonlyArray<Quarantined>
}

/**
 * Who holds a claim: a random id, and where the storage can tell, the process
 * (then a claim of a process that is gone is taken over at once). A pid
 * names a process only within one process table: `bootId` and
 * `pidNamespace` (Linux) say which, so a container never probes another's
 * pids. A claim without them waits for its expiry.
 *
 * @since 0.1.0
 * @category models
 */
export const Owner = Schema.Struct({
  id: Schema.String,
  pid: Schema.optional(Schema.Number),
  host: Schema.optional(Schema.String),
  /** `/proc/sys/kernel/random/boot_id`: one per kernel boot. */
  bootId: Schema.optional(Schema.String),
  /** The link `/proc/self/ns/pid`, e.g. `pid:[4026531836]`: one per PID namespace of that boot. */
  pidNamespace: Schema.optional(Schema.String)
})
/**
 * Who holds a claim: a random id, and where the storage can tell, the
 * process (then a claim of a process that is gone is taken over at once). A
 * pid names a process only within one process table: `bootId` and
 * `pidNamespace` (Linux) say which, so a container never probes another's
 * pids. A claim without them waits for its expiry.
 *
 * @since 0.1.0
 * @category models
 */
export type Owner = typeof Owner.Type

/**
 * The operations a journal needs from where it keeps its records. Keys are
 * short strings chosen by the journal.
 *
 * @since 0.1.0
 * @category models
 */
export interface Storage {
  /** Every key. */
  readonly keys: Effect.Effect<ReadonlyArray<string>, JournalError>
  /**
   * Entries that stand for no key (a file of a name the journal never
   * writes), moved aside as `quarantine` does. Asked before `keys`.
   */
  readonly strays?: Effect.Effect<ReadonlyArray<Quarantined>, JournalError> | undefined
  readonly read: (key: string) => Effect.Effect<Option.Option<string>, JournalError>
  /** Replaces the value at once: a reader sees the old one or the new one, never a part. */
  readonly write: (key: string, value: string) => Effect.Effect<void, JournalError>
  /** Writes only when the key is absent, in one step; `false` when it was there. */
  readonly create: (key: string, value: string) => Effect.Effect<boolean, JournalError>
  /** Removes the key only while its value is still `expected`; `false` otherwise. */
  readonly removeIf: (key: string, expected: string) => Effect.Effect<boolean, JournalError>
  readonly remove: (key: string) => Effect.Effect<void, JournalError>
  /** Moves the key out of `keys`, keeping its value for a person to look at; returns where. */
  readonly quarantine: (key: string) => Effect.Effect<string, JournalError>
  /** This process, as a claim names it. */
  readonly owner: Owner
  /** Whether a claim's owner still runs; `undefined` when the storage cannot tell. */
  readonly isAlive: (owner: Owner) => boolean | undefined
  /**
   * Holds the lock `key` until the scope closes: `false` when another holds
   * it. For a platform that releases a lock when its holder goes away (the
   * Web Locks API of a page); a storage with it keeps no claim records.
   */
  readonly lock?: ((key: string) => Effect.Effect<boolean, JournalError, Scope.Scope>) | undefined
  /**
   * Holds `size` bytes of space until the scope closes, for one record
   * written later with `fill` (which takes the space held: it needs none
   * more when the value fits). For a storage that can run out of room (a
   * file system); without it, the journal reserves with a placeholder
   * record written by `write` and removed just before the record is.
   */
  readonly reserve?: ((size: number) => Effect.Effect<Reserved, JournalError, Scope.Scope>) | undefined
  /** Whether other processes may share this storage (then claims expire and are renewed). */
  readonly shared: boolean
  /** The journal of earlier versions, one JSON array, imported once when found. */
  readonly legacy?: {
    readonly read: Effect.Effect<Option.Option<string>, JournalError>
    readonly remove: Effect.Effect<void, JournalError>
  } | undefined
}

/**
 * Space a `Storage` holds for one record.
 *
 * @since 1.1.0
 * @category models
 */
export interface Reserved {
  /** Writes `value` at `key` in the space held (as `write` does: a reader sees the old value or the new one). */
  readonly fill: (key: string, value: string) => Effect.Effect<void, JournalError>
}

/**
 * What a record will hold, known before the task is submitted: enough to
 * reserve its full size.
 *
 * @since 1.1.0
 * @category models
 */
export interface Draft {
  readonly model: string
  readonly prompt: string
  readonly output?: string | undefined
}

/**
 * Room for one task's record, held until the scope closes.
 *
 * @since 1.1.0
 * @category models
 */
export interface Reservation {
  /** Writes the record in the room held. */
  readonly record: (entry: Entry) => Effect.Effect<void, JournalError>
}

/**
 * Where submitted tasks are recorded, so a program that restarts finds its
 * paid tasks again.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Holds room for the record of a task about to be submitted, until the
   * scope closes: fails when the journal cannot take it (a full disk, a
   * storage quota, a read-only database), before anything is paid for.
   */
  readonly reserve: (draft: Draft) => Effect.Effect<Reservation, JournalError, Scope.Scope>
  readonly record: (entry: Entry) => Effect.Effect<void, JournalError>
  readonly get: (taskId: string) => Effect.Effect<Option.Option<Entry>, JournalError>
  readonly remove: (taskId: string) => Effect.Effect<void, JournalError>
  /** The valid records; a record that cannot be decoded is quarantined and reported. */
  readonly scan: Effect.Effect<Listing, JournalError>
  /** The valid records (`scan` without the report). */
  readonly list: Effect.Effect<ReadonlyArray<Entry>, JournalError>
  /**
   * Claims a task for this process until the scope closes: `false` when a
   * live process holds it. An expired claim, or one of a process that is
   * gone, is taken over.
   */
  readonly claim: (taskId: string) => Effect.Effect<boolean, JournalError, Scope.Scope>
}

/**
 * The service that keeps the records of submitted tasks (see `Service`).
 *
 * @since 0.1.0
 * @category tags
 */
export class TaskJournal extends Context.Service<TaskJournal, Service>()("@switchboard/core/TaskJournal") {}

/**
 * How long a claim lasts unless renewed; its holder renews it every third of that.
 *
 * @since 0.1.0
 * @category constants
 */
export const claimTtl: Duration.Duration = Duration.minutes(2)
/**
 * How often a claim's holder renews it: a third of `claimTtl`.
 *
 * @since 0.1.0
 * @category constants
 */
export const renewEvery: Duration.Duration = Duration.seconds(40)

/**
 * A claim as it is stored: who holds it, and until when (epoch milliseconds).
 *
 * @since 0.1.0
 * @category models
 */
export const Claim = Schema.Struct({ owner: Owner, expiresAt: Schema.Number })
/**
 * A claim as it is stored: who holds it, and until when (epoch
 * milliseconds).
 *
 * @since 0.1.0
 * @category models
 */
export type Claim = typeof Claim.Type

const taskPrefix = "task-"
const claimPrefix = "claim-"
const EntryJson = Schema.fromJsonString(Entry)
const decodeEntry = Schema.decodeResult(EntryJson)
const encodeEntry = Schema.encodeSync(EntryJson)
const decodeLegacy = Schema.decodeResult(Schema.fromJsonString(Schema.Array(Schema.Unknown)))
const decodeLegacyEntry = Schema.decodeUnknownResult(Entry)
const ClaimJson = Schema.fromJsonString(Claim)
const decodeClaim = Schema.decodeResult(ClaimJson)
const encodeClaim = Schema.encodeSync(ClaimJson)

// Every runtime the SDK runs on (Node 20+, browsers) has these; core is
// built without DOM or Node typings, hence the declarations.
declare const TextEncoder: new() => { encode(input: string): Uint8Array }
declare const DOMException: (abstract new(...args: never) => { readonly name: string }) | undefined

const reservePrefix = "reserve-"
let reservations = 0

/**
 * Longest task id a reservation has room for; a longer one (no service
 * gives one) needs more when recorded.
 */
const reservedTaskIdLength = 256
/** Room for what a storage adds to a record (a file's header line). */
const reservedOverhead = 512

/**
 * The bytes (UTF-8) to reserve for the record of `draft`: the record with
 * the longest task id and time it may hold, and a storage's overhead. At
 * least the record's length in UTF-16 units too (a Web Storage's measure).
 *
 * @since 1.1.0
 * @category reservations
 */
export const reservedSize = (draft: Draft): number =>
  new TextEncoder().encode(encodeEntry({
    taskId: "x".repeat(reservedTaskIdLength),
    model: draft.model,
    prompt: draft.prompt,
    submittedAt: Number.MAX_SAFE_INTEGER,
    ...(draft.output === undefined ? {} : { output: draft.output })
  })).length + reservedOverhead

/**
 * A reservation over `write` alone: a placeholder of `size` characters
 * (a claim padded with spaces, so that one left by a process that is gone
 * is dropped as an orphan claim), removed just before the record is written.
 */
const placeholder = (storage: Storage, size: number): Effect.Effect<Reserved, JournalError, Scope.Scope> =>
  Effect.gen(function*() {
    const key = `${reservePrefix}${storage.owner.id}-${++reservations}`
    const now = yield* Clock.currentTimeMillis
    yield* Effect.acquireRelease(storage.write(key, claimOf(storage.owner, now).padEnd(size)), () => Effect.ignore(storage.remove(key)))
    return { fill: (target, value) => Effect.andThen(storage.remove(key), storage.write(target, value)) } satisfies Reserved
  })

/**
 * A claim held by `owner` from `now` for `claimTtl`, as stored.
 *
 * @since 0.1.0
 * @category claims
 */
export const claimOf = (owner: Owner, now: number): string => encodeClaim({ owner, expiresAt: now + Duration.toMillis(claimTtl) })

/**
 * Who holds the stored claim `text` at `now`: none when it expired, its
 * holder is known to be gone (`isAlive` says `false`), or it cannot be read
 * (then it is taken over).
 *
 * @since 0.1.0
 * @category claims
 */
export const liveHolder = (text: string, now: number, isAlive: Storage["isAlive"]): Option.Option<Owner> =>
  Result.match(decodeClaim(text), {
    onFailure: () => Option.none(),
    onSuccess: (held) => (held.expiresAt > now && isAlive(held.owner) !== false ? Option.some(held.owner) : Option.none())
  })

/**
 * Decodes a stored record: the entry, or why it cannot be read.
 *
 * @since 0.1.0
 * @category models
 */
export const decodeRecord = (text: string): Result.Result<Entry, string> => Result.mapError(decodeEntry(text), (e) => e.message)

/**
 * A record as it is stored.
 *
 * @since 0.1.0
 * @category models
 */
export const encodeRecord = (entry: Entry): string => encodeEntry(entry)

/**
 * The system's name for why an operation failed, found on `cause` or its
 * causes: a Node error's `code` (`ENOSPC`, `EDQUOT`), a `DOMException`'s
 * `name` (`QuotaExceededError`), a driver's code (`SQLITE_FULL`).
 *
 * @since 1.1.0
 * @category errors
 */
export const systemCode = (cause: unknown): string | undefined => {
  for (let at = cause, depth = 0; typeof at === "object" && at !== null && depth < 8; depth++) {
    const { code, name } = at as { readonly code?: unknown; readonly name?: unknown }
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]+$/.test(code)) return code
    if (typeof name === "string" && name !== "Error" && /Error$/.test(name) && typeof DOMException === "function" && at instanceof DOMException) return name
    at = (at as { readonly cause?: unknown }).cause
  }
  return undefined
}

/**
 * The `JournalError` of a failed `action`, naming the system's code for it.
 *
 * @since 1.1.0
 * @category errors
 */
export const failure = (action: string) => (cause: unknown): JournalError => {
  const code = systemCode(cause)
  const message = cause instanceof Error || (typeof cause === "object" && cause !== null && "message" in cause)
    ? String((cause as { readonly message: unknown }).message)
    : String(cause)
  return new JournalError({
    message: `task journal could not ${action}: ${code === undefined || message.includes(code) ? "" : `${code}: `}${message}`,
    ...(code === undefined ? {} : { code })
  })
}

/**
 * Builds the journal over `storage`, importing a journal of an earlier
 * version once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (storage: Storage): Effect.Effect<Service, JournalError> =>
  Effect.gen(function*() {
    const record = (entry: Entry) => storage.write(taskPrefix + entry.taskId, encodeEntry(entry))

    const get = (taskId: string) =>
      Effect.map(storage.read(taskPrefix + taskId), Option.flatMap((text) => Result.getSuccess(decodeEntry(text))))

    const readRecord = (key: string) =>
      Effect.flatMap(storage.read(key), Option.match({
        onNone: () => Effect.succeed(undefined),
        onSome: (text) =>
          Result.match(decodeEntry(text), {
            onSuccess: (entry) => Effect.succeed<Entry | Quarantined>(entry),
            onFailure: (error) =>
              Effect.map(storage.quarantine(key), (movedTo): Entry | Quarantined => ({ key, movedTo, message: error.message }))
          })
      }))

    const scan = Effect.gen(function*() {
      const strays = storage.strays === undefined ? [] : yield* storage.strays
      const all = yield* storage.keys
      const keys = all.filter((key) => key.startsWith(taskPrefix))
      yield* dropOrphanClaims(all)
      const read = yield* Effect.forEach(keys, readRecord, { concurrency: 8 })
      const entries: Array<Entry> = []
      const quarantined: Array<Quarantined> = [...strays]
      for (const item of read) {
        if (item === undefined) continue
        if ("movedTo" in item) quarantined.push(item)
        else entries.push(item)
      }
      return { entries: entries.sort((a, b) => a.submittedAt - b.submittedAt), quarantined } satisfies Listing
    })

    const isLiveClaim = (text: string, now: number) => Option.isSome(liveHolder(text, now, storage.isAlive))

    /** Claims left by a process that died after its task's record was removed. */
    const dropOrphanClaims = (keys: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const records = new Set(keys.filter((key) => key.startsWith(taskPrefix)).map((key) => key.slice(taskPrefix.length)))
        const orphans = keys.filter((key) =>
          (key.startsWith(claimPrefix) && !records.has(key.slice(claimPrefix.length))) || key.startsWith(reservePrefix)
        )
        yield* Effect.forEach(orphans, (key) =>
          Effect.flatMap(storage.read(key), (text) =>
            Option.isSome(text) && !isLiveClaim(text.value, now) ? Effect.asVoid(storage.removeIf(key, text.value)) : Effect.void), {
          discard: true
        })
      })

    const claimText = (now: number) => claimOf(storage.owner, now)

    const tryClaim = (key: string) =>
      Effect.gen(function*() {
        const mine = claimText(yield* Clock.currentTimeMillis)
        if (yield* storage.create(key, mine)) return true
        const current = yield* storage.read(key)
        if (Option.isNone(current)) return yield* storage.create(key, mine)
        const held = decodeClaim(current.value)
        if (Result.isSuccess(held) && held.success.owner.id === storage.owner.id) return true
        if (isLiveClaim(current.value, yield* Clock.currentTimeMillis)) return false
        // Expired, of a process that is gone, or unreadable: take it over,
        // unless another process did so first.
        return (yield* storage.removeIf(key, current.value)) && (yield* storage.create(key, mine))
      })

    /** The stored claim at `key` when this process holds it. */
    const mine = (key: string) =>
      Effect.map(
        storage.read(key),
        Option.filter((text) => Result.getSuccess(decodeClaim(text)).pipe(Option.exists((c) => c.owner.id === storage.owner.id)))
      )

    const release = (key: string) =>
      Effect.flatMap(mine(key), Option.match({ onNone: () => Effect.void, onSome: (text) => Effect.asVoid(storage.removeIf(key, text)) }))

    /** Extends this process's claim; a claim taken over meanwhile stays with its new holder. */
    const renew = (key: string) =>
      Effect.flatMap(mine(key), (held) =>
        Option.isNone(held) ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (now) => storage.write(key, claimText(now))))

    const claim = (taskId: string) =>
      Effect.gen(function*() {
        const key = claimPrefix + taskId
        if (storage.lock !== undefined) return yield* storage.lock(key)
        const taken = yield* Effect.acquireRelease(tryClaim(key), (taken) => (taken ? Effect.ignore(release(key)) : Effect.void))
        if (taken && storage.shared) yield* keepRenewed(taskId, renew(key))
        return taken
      })

    const reserve = (draft: Draft) =>
      Effect.map(
        (storage.reserve ?? ((size) => placeholder(storage, size)))(reservedSize(draft)),
        (held): Reservation => ({ record: (entry) => held.fill(taskPrefix + entry.taskId, encodeEntry(entry)) })
      )

    yield* importLegacy(storage, record)

    return TaskJournal.of({
      reserve,
      record,
      get,
      remove: (taskId) => Effect.andThen(storage.remove(taskPrefix + taskId), Effect.ignore(release(claimPrefix + taskId))),
      scan,
      list: Effect.map(scan, (listing) => listing.entries),
      claim
    })
  })

/**
 * Renews a claim every `renewEvery` until the scope closes. A renewal that
 * fails is logged and the next one tried: one failure must not end them, or
 * the claim would expire under its live holder. Interruptible even when
 * claimed from an uninterruptible region (a submission).
 *
 * @since 0.1.0
 * @category claims
 */
export const keepRenewed = <E extends { readonly message: string }>(
  taskId: string,
  renew: Effect.Effect<unknown, E>
): Effect.Effect<void, never, Scope.Scope> => {
  const once = Effect.catch(renew, (error) => Effect.logWarning(`could not renew the claim on task ${taskId}: ${error.message}`))
  // The first renewal a period after the claim, which is fresh.
  return Effect.asVoid(Effect.forkScoped(Effect.interruptible(Effect.delay(Effect.repeat(once, Schedule.spaced(renewEvery)), renewEvery))))
}

/** Writes each valid entry of an earlier version's journal as its own record, then drops that journal. */
const importLegacy = (storage: Storage, record: (entry: Entry) => Effect.Effect<void, JournalError>) =>
  Effect.gen(function*() {
    if (storage.legacy === undefined) return
    const text = yield* storage.legacy.read
    if (Option.isNone(text)) return
    const items = Result.getOrElse(decodeLegacy(text.value), () => [] as ReadonlyArray<unknown>)
    for (const item of items) {
      const entry = decodeLegacyEntry(item)
      if (Result.isSuccess(entry) && Option.isNone(yield* storage.read(taskPrefix + entry.success.taskId))) {
        yield* record(entry.success)
      }
    }
    yield* storage.legacy.remove
  })

/**
 * A `Storage` in memory, for one process.
 *
 * @since 0.1.0
 * @category constructors
 */
export const memoryStorage = (): Storage => {
  const values = new Map<string, string>()
  return {
    keys: Effect.sync(() => [...values.keys()]),
    read: (key) => Effect.sync(() => Option.fromUndefinedOr(values.get(key))),
    write: (key, value) => Effect.sync(() => void values.set(key, value)),
    create: (key, value) => Effect.sync(() => (values.has(key) ? false : (values.set(key, value), true))),
    removeIf: (key, expected) => Effect.sync(() => values.get(key) === expected && values.delete(key)),
    remove: (key) => Effect.sync(() => void values.delete(key)),
    quarantine: (key) =>
      Effect.sync(() => {
        const movedTo = `quarantine-${key}`
        values.set(movedTo, values.get(key) ?? "")
        values.delete(key)
        return movedTo
      }),
    owner: { id: "memory" },
    isAlive: () => true,
    shared: false
  }
}

/**
 * The journal over the `Storage` `storage` builds.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, R>(storage: Effect.Effect<Storage, E, R>): Layer.Layer<TaskJournal, E | JournalError, R> =>
  Layer.effect(TaskJournal, Effect.flatMap(storage, make))

/**
 * A journal in memory: tasks are tracked within one process only.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TaskJournal> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.orDie(layer(Effect.sync(memoryStorage))))

/**
 * A random id for a claim's owner.
 *
 * @since 0.1.0
 * @category constructors
 */
export const randomId = (): string =>
  `${Date.now().toString(36)}${Math.floor(Math.random() * 0x1_0000_0000).toString(36)}${Math.floor(Math.random() * 0x1_0000_0000).toString(36)}`
