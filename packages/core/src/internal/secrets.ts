/**
 * Which headers carry secrets: one rule, read by `Transport`'s redaction (a
 * secret header's value never appears in an error) and by the browser key
 * guard (a page that would send one is refused), so that what one treats as
 * a secret the other does too. Importable by the other Switchboard packages
 * (`@switchboard/core/internal/secrets`), not part of the public API.
 */
import * as Context from "effect/Context"

// `authorization`, `x-api-key`, `api-key`, `x-auth-token`, `cookie`, `x-session-id`, …
const secretName = /auth|key|token|secret|cookie|password|session/i
// The rate-limit headers of a reply name tokens but hold counts (`ResponseMetadata`).
const rateLimitName = /^x-ratelimit-/i

/** Whether a header named `name` (any case) carries a secret. */
export const isSecretHeader = (name: string): boolean => secretName.test(name) && !rateLimitName.test(name)

/** The first header of `headers` that carries a secret (a name the rule matches, a value not blank), in lower case. */
export const secretHeaderIn = (headers: Readonly<Record<string, unknown>>): string | undefined => {
  for (const [name, value] of Object.entries(headers)) {
    if (isSecretHeader(name) && typeof value === "string" && value.trim() !== "") return name.toLowerCase()
  }
  return undefined
}

/**
 * Replaces each of `secrets` (at least 4 characters; shorter ones are left,
 * they would redact ordinary words) by `[redacted]` in a text someone else
 * wrote: a server echoes a wrong key in its 401. The longest go first, so a
 * secret that holds another is replaced whole.
 */
export const redactor = (secrets: ReadonlyArray<string>): (text: string) => string => {
  const kept = secrets.filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length)
  if (kept.length === 0) return (text) => text
  return (text) => {
    let out = text
    for (const secret of kept) if (out.includes(secret)) out = out.split(secret).join("[redacted]")
    return out
  }
}

/**
 * Set by a layer whose requests may carry no secret (the browser's, unless
 * `allowApiKeyInBrowser`): `Transport` then refuses a call given a secret
 * header per call (`RequestOptions.headers`) with a `ConfigurationError`
 * naming it (`requestOptions.headers.x-api-key`), before anything is sent.
 * The function gives that error's message for the field. Read by
 * `Transport` when it is built; none by default.
 */
export const RefuseSecretHeaders = Context.Reference<((field: string) => string) | undefined>(
  "@switchboard/core/internal/secrets/RefuseSecretHeaders",
  { defaultValue: () => undefined }
)
