/**
 * Helpers of the property tests that hold a hand-written check to a schema:
 * a value as it comes over the wire, and a value with one part replaced.
 */

/** `value` as JSON would carry it (no `undefined`, no `Infinity`). */
export const viaJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

/** `value` with the part at `path` (indexes into its entries, level by level) replaced. */
export const mutate = (value: unknown, path: ReadonlyArray<number>, replacement: unknown): unknown => {
  if (path.length === 0 || typeof value !== "object" || value === null) return replacement
  const entries = Object.entries(value)
  if (entries.length === 0) return replacement
  const [key, inner] = entries[path[0]! % entries.length]!
  const copy: Record<string, unknown> = Array.isArray(value) ? [...value] as never : { ...value }
  copy[key] = mutate(inner, path.slice(1), replacement)
  return copy
}
