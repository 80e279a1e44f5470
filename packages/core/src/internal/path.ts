/**
 * Field paths as users read them. Importable by the other Switchboard
 * packages (`@switchboard/core/internal/path`), not part of the public API.
 */

/** `["messages", 2, "tool_call_id"]` → `messages[2].tool_call_id`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
    ""
  )
