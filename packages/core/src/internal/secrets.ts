/**
 * Which headers carry secrets: one rule, read by `Transport`'s redaction (a
 * secret header's value never appears in an error) and by the browser key
 * guard (a page that would send one is refused), so that what one treats as
 * a secret the other does too. Importable by the other Switchboard packages
 * (`@switchboard/core/internal/secrets`), not part of the public API.
 */

// `authorization`, `x-api-key`, `api-key`, `x-auth-token`, `cookie`, `x-session-id`, …
const secretName = /auth|key|token|secret|cookie|password|session/i
// The rate-limit headers of a reply name tokens but hold counts (`ResponseMetadata`).
const rateLimitName = /^x-ratelimit-/i

/** Whether a header named `name` (any case) carries a secret. */
export const isSecretHeader = (name: string): boolean => secretName.test(name) && !rateLimitName.test(name)
