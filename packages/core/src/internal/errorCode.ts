/** Walks an error's `cause` chain for a Node-style `code` such as `ECONNRESET`. */
export const errorCode = (error: unknown): string | undefined => {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === "object" && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === "string") return code
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}
