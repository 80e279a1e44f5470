/**
 * Approval ids: what a decision is keyed by. A call id alone is the
 * service's to choose and a stored transcript's to change; an approval id is
 * a SHA-256 of the call's id, its tool's name and its arguments in canonical
 * JSON, so a decision given for what the approver saw holds for nothing else.
 *
 * @internal
 */
import * as Protocol from "@switchboard/core/Protocol"
import * as Digest from "effect/crypto/Digest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"

/**
 * JSON with object keys sorted, so that spacing and key order (which the
 * model is free to vary) do not change the id. Bounded by the model JSON's
 * nesting limit, as the arguments are parsed the way the tool's are.
 */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record).sort().map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** The arguments as the tool would read them (`__proto__` keys dropped), or as sent when they do not parse. */
const canonicalArguments = (text: string): string => {
  if (text.trim() === "") return "{}"
  const parsed = Protocol.parseModelJson(text)
  return Result.isSuccess(parsed) ? canonical(parsed.success) : JSON.stringify(text)
}

// The build has no DOM or Node types; every runtime the SDK supports has it.
declare const TextEncoder: new() => { readonly encode: (text: string) => Uint8Array }

const encoder = new TextEncoder()

/** The approval id of each call, in order. */
export const approvalIds = (calls: ReadonlyArray<Protocol.ToolCall>): Effect.Effect<ReadonlyArray<string>> =>
  calls.length === 0 ? Effect.succeed([]) : Effect.flatMap(Digest.Digest, (digest) =>
    Effect.forEach(calls, (call) =>
      Effect.map(
        digest.digestHex(
          Digest.sha256,
          encoder.encode(JSON.stringify([call.id, call.function.name]) + canonicalArguments(call.function.arguments))
        ),
        (hex) => `approval_${hex.slice(0, 40)}`
      ))).pipe(Effect.provide(Digest.layerWebCrypto))
