/**
 * Task journals for a page. In `localStorage` a reloaded page (or a new tab
 * on the same origin) finds the video tasks it submitted and resumes them
 * with `Videos.resumePending` instead of losing them or paying for them
 * twice.
 *
 * @since 0.1.0
 */
import * as BrowserKeyValueStore from "@effect/platform-browser/BrowserKeyValueStore"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

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

/**
 * The journal in `localStorage`, under the key `switchboard-video-tasks`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLocalStorage: Layer.Layer<TaskJournal.TaskJournal> = TaskJournal.layer.pipe(
  Layer.provide(BrowserKeyValueStore.layerLocalStorage)
)

/**
 * The journal in `sessionStorage`: survives reloads of this tab only.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSessionStorage: Layer.Layer<TaskJournal.TaskJournal> = TaskJournal.layer.pipe(
  Layer.provide(BrowserKeyValueStore.layerSessionStorage)
)

/**
 * The journal in the chosen storage. A storage the page may not use falls
 * back to memory, so a page with storage disabled still works (its tasks just
 * do not survive a reload). The choice is made when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (storage: Storage = "auto"): Layer.Layer<TaskJournal.TaskJournal> =>
  Layer.unwrapEffect(Effect.sync(() => {
    switch (storage) {
      case "memory":
        return TaskJournal.layerMemory
      case "sessionStorage":
        return isStorageAvailable("sessionStorage") ? layerSessionStorage : TaskJournal.layerMemory
      default:
        return isStorageAvailable("localStorage") ? layerLocalStorage : TaskJournal.layerMemory
    }
  }))
