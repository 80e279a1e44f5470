/**
 * Byte arrays read in parts, joined: the one join every body reader uses
 * (`HttpWire.readUpTo`, `WireLimits`' text body, the agent's web body, the
 * Node layer's file reads).
 */

/** The parts' first `size` bytes (all of them by default) as one array; a single part is not copied. */
export const joinBytes = (parts: ReadonlyArray<Uint8Array>, size = totalBytes(parts)): Uint8Array => {
  if (parts.length === 1) return parts[0]!.subarray(0, size)
  const out = new Uint8Array(size)
  let offset = 0
  for (const part of parts) {
    if (offset >= size) break
    const piece = part.subarray(0, size - offset)
    out.set(piece, offset)
    offset += piece.length
  }
  return out
}

const totalBytes = (parts: ReadonlyArray<Uint8Array>): number => {
  let size = 0
  for (const part of parts) size += part.length
  return size
}
