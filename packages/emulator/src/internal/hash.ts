/**
 * Small deterministic hashes: every "random-looking" value the emulator
 * produces (ids, vectors, fault picks) comes from here so runs repeat exactly.
 *
 * @internal
 */

/** 32-bit FNV-1a over the UTF-16 code units of a string. */
export const fnv1a = (text: string, seed = 0x811c9dc5): number => {
  let hash = seed >>> 0
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash >>> 0
}

/** Six base-36 characters, enough to tell ids apart in a conversation. */
export const shortHash = (text: string): string => fnv1a(text).toString(36).padStart(7, "0").slice(-6)

/** mulberry32: a tiny seeded PRNG returning numbers in [0, 1). */
export const mulberry32 = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
