/**
 * Task journals for a page. In `localStorage` a reloaded page (or a new tab
 * on the same origin) finds the video tasks it submitted and resumes them
 * with `Videos.resumePending` instead of losing them or paying for them
 * twice.
 *
 * @since 0.1.0
 */
import { JournalError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"

/**
 * Where the journal lives:
 * - `auto` (the default): `localStorage` when the page may use it, else memory;
 * - `localStorage`: kept across reloads and tabs of the origin;
 * - `sessionStorage`: kept across reloads of this tab only;
 * - `memory`: gone with the page.
 *
 * @since 0.1.0
 * @category models
 */
export type Storage = "auto" | "localStorage" | "sessionStorage" | "memory"

/**
 * Whether `localStorage` (or `sessionStorage`) exists and accepts a write. It
 * may be missing (outside a page), or throw (storage disabled, a sandboxed
 * frame, some private modes), or be full.
 *
 * @since 0.1.0
 * @category guards
 */
export const isStorageAvailable = (name: "localStorage" | "sessionStorage" = "localStorage"): boolean => {
  try {
    const storage = (globalThis as { readonly [key: string]: unknown })[name] as globalThis.Storage | undefined
    if (storage === undefined || storage === null) return false
    const probe = "__switchboard_storage_probe__"
    storage.setItem(probe, probe)
    storage.removeItem(probe)
    return true
  } catch {
    return false
  }
}

const prefix = "switchboard-video-tasks/"
const legacyKey = "switchboard-video-tasks"

/** Names the system's reason, e.g. `QuotaExceededError` for a storage at its quota. */
const storageError = TaskJournal.failure

/**
 * Holds the Web Lock `name` until the scope closes, `false` at once when
 * another page (or this one) holds it. The browser releases a page's locks
 * when the page goes away (reload, closed tab, crash).
 */
const webLock = (locks: LockManager, name: string): Effect.Effect<boolean, JournalError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<Option.Option<() => void>, JournalError>((resume) => {
      let settled = false
      const settle = (outcome: Effect.Effect<Option.Option<() => void>, JournalError>) => {
        if (!settled) resume(outcome)
        settled = true
      }
      locks.request(name, { ifAvailable: true }, (lock) =>
        lock === null
          ? settle(Effect.succeed(Option.none()))
          : new Promise<void>((release) => settle(Effect.succeed(Option.some(release))))).catch((error: unknown) =>
          settle(Effect.fail(storageError(`lock ${name}`)(error)))
        )
    }),
    (held) => Effect.sync(() => Option.map(held, (release) => release()))
  ).pipe(Effect.map(Option.isSome))

/** The page's Web Locks, when it has them (a secure context of a browser of 2022 or later). */
const pageLocks = (): LockManager | undefined => {
  const locks = (globalThis as { readonly navigator?: { readonly locks?: LockManager } }).navigator?.locks
  return typeof locks?.request === "function" ? locks : undefined
}

/**
 * A journal `Storage` over a Web Storage: one item per record, under
 * `switchboard-video-tasks/<key>`. A page runs one event loop, so each step
 * is atomic within it. Claims are Web Locks (`navigator.locks`), shared by
 * the origin's tabs and released by the browser with the page, so a
 * reloaded page resumes its tasks at once and two tabs never both follow
 * one; where the page has no Web Locks (an insecure context, an old
 * browser) they are records that expire (`docs/browser.md`). A journal of
 * an earlier version (one item, `switchboard-video-tasks`) is imported once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeStorage = (storage: globalThis.Storage, locks: LockManager | undefined = pageLocks()): TaskJournal.Storage => {
  const attempt = <A>(action: string, f: () => A) => Effect.try({ try: f, catch: storageError(action) })
  const keys = () => Array.from({ length: storage.length }, (_, i) => storage.key(i)).filter((k): k is string => k !== null)
  return {
    keys: attempt("list its records", () => keys().filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length))),
    read: (key) => attempt(`read ${key}`, () => Option.fromNullOr(storage.getItem(prefix + key))),
    write: (key, value) => attempt(`write ${key}`, () => storage.setItem(prefix + key, value)),
    create: (key, value) =>
      attempt(`create ${key}`, () => storage.getItem(prefix + key) === null && (storage.setItem(prefix + key, value), true)),
    removeIf: (key, expected) =>
      attempt(`remove ${key}`, () => storage.getItem(prefix + key) === expected && (storage.removeItem(prefix + key), true)),
    remove: (key) => attempt(`remove ${key}`, () => storage.removeItem(prefix + key)),
    quarantine: (key) =>
      attempt(`set ${key} aside`, () => {
        const movedTo = `switchboard-video-tasks-quarantine/${key}.${TaskJournal.randomId()}`
        storage.setItem(movedTo, storage.getItem(prefix + key) ?? "")
        storage.removeItem(prefix + key)
        return movedTo
      }),
    owner: { id: TaskJournal.randomId() },
    isAlive: () => undefined,
    lock: locks === undefined ? undefined : (key) => webLock(locks, prefix + key),
    shared: true,
    legacy: {
      read: attempt("read the old journal", () => Option.fromNullOr(storage.getItem(legacyKey))),
      remove: attempt("remove the old journal", () => storage.removeItem(legacyKey))
    }
  }
}

const over = (name: "localStorage" | "sessionStorage"): Layer.Layer<TaskJournal.TaskJournal, JournalError> =>
  TaskJournal.layer(Effect.sync(() => makeStorage((globalThis as unknown as Record<string, globalThis.Storage>)[name]!)))

/**
 * The journal in `localStorage`, one item per task under `switchboard-video-tasks/`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLocalStorage: Layer.Layer<TaskJournal.TaskJournal, JournalError> = over("localStorage")

/**
 * The journal in `sessionStorage`: survives reloads of this tab only.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSessionStorage: Layer.Layer<TaskJournal.TaskJournal, JournalError> = over("sessionStorage")

/**
 * The journal in the chosen storage. A storage the page may not use falls
 * back to memory, so a page with storage disabled still works (its tasks just
 * do not survive a reload). The choice is made when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (storage: Storage = "auto"): Layer.Layer<TaskJournal.TaskJournal, JournalError> =>
  Layer.unwrap(Effect.sync(() => {
    switch (storage) {
      case "memory":
        return TaskJournal.layerMemory
      case "sessionStorage":
        return isStorageAvailable("sessionStorage") ? layerSessionStorage : TaskJournal.layerMemory
      default:
        return isStorageAvailable("localStorage") ? layerLocalStorage : TaskJournal.layerMemory
    }
  }))
