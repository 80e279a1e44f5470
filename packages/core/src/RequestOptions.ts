/**
 * Per-call options without changing any signature: a scope of code sets them
 * with `Switchboard.withRequestOptions` and every call inside it uses them.
 * They win over the layer's configuration, which wins over the defaults.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Stream from "effect/Stream"
import type * as ResponseMetadata from "./ResponseMetadata.js"
import type * as Retry from "./Retry.js"

/**
 * Every field is optional; an absent one keeps the layer's value.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  /** Time limit of each attempt of a JSON call. */
  readonly timeout?: Duration.Input | undefined
  /** Retries after the first attempt. */
  readonly maxRetries?: number | undefined
  readonly retryBaseDelay?: Duration.Input | undefined
  readonly maxRetryDelay?: Duration.Input | undefined
  /** Decides which failures are retried, in place of `Retry.standard`. */
  readonly retry?: Retry.Rule | undefined
  /**
   * Extra headers, over the layer's (names compared in lower case). They may
   * not set `authorization`: the key is the layer's, and a header that
   * replaced it silently would send another credential than the one
   * configured and redacted. Such a header is a `ConfigurationError`.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly streamFirstByteTimeout?: Duration.Input | undefined
  readonly streamIdleTimeout?: Duration.Input | undefined
  readonly streamTotalTimeout?: Duration.Input | undefined
  /**
   * Called with the metadata of every reply a call gets (each attempt's,
   * a refused one too), for logging and metrics; for a stream, when its
   * headers arrive, before its first chunk. An inner hook runs after an
   * outer one: both run.
   */
  readonly onResponse?: ((response: ResponseMetadata.ResponseMetadata) => Effect.Effect<void>) | undefined
}

const none: RequestOptions = {}

/**
 * The options in effect; none outside any `withRequestOptions`.
 *
 * @since 0.1.0
 * @category references
 */
export const CurrentRequestOptions: Context.Reference<RequestOptions> = Context.Reference<RequestOptions>(
  "@switchboard/core/CurrentRequestOptions",
  { defaultValue: () => none }
)

/**
 * Whether no option is set: calls then use the layer's settings as built.
 *
 * @since 0.1.0
 * @category guards
 */
export const isEmpty = (options: RequestOptions): boolean => options === none

/** Both hooks, the outer first. */
const both = (
  outer: NonNullable<RequestOptions["onResponse"]>,
  inner: NonNullable<RequestOptions["onResponse"]>
): NonNullable<RequestOptions["onResponse"]> =>
(response) => Effect.andThen(outer(response), inner(response))

/** Inner options over outer ones; headers merged, hooks both run. */
const merge = (outer: RequestOptions, inner: RequestOptions): RequestOptions =>
  isEmpty(outer) ? inner : {
    ...outer,
    ...inner,
    ...(outer.headers && inner.headers ? { headers: { ...outer.headers, ...inner.headers } } : {}),
    ...(outer.onResponse && inner.onResponse ? { onResponse: both(outer.onResponse, inner.onResponse) } : {})
  }

/**
 * Whether the options set nothing but `onResponse`: calls then use the
 * layer's settings as built, and only report their replies.
 *
 * @since 1.1.0
 * @category guards
 */
export const onlyHook = (options: RequestOptions): boolean => {
  for (const key in options) {
    if (key !== "onResponse" && options[key as keyof RequestOptions] !== undefined) return false
  }
  return true
}

/** What per-call options can scope: an effect or a stream (its type is kept). */
type Scoped = Effect.Effect<unknown, unknown, unknown> | Stream.Stream<unknown, unknown, unknown>

/**
 * Runs an effect or a stream with these options for every call inside it,
 * over any set by an enclosing `withRequestOptions`. Options are checked when
 * a call starts: a bad one fails that call with a `ConfigurationError`
 * naming it, before anything is sent.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Switchboard from "@switchboard/core/Switchboard"
 *
 * const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] }
 * const quick = Chat.create(request).pipe(Switchboard.withRequestOptions({ timeout: "5 seconds", maxRetries: 0 }))
 * ```
 * @since 0.1.0
 * @category combinators
 */
export const withRequestOptions: {
  (options: RequestOptions): <Self extends Scoped>(self: Self) => Self
  <Self extends Scoped>(self: Self, options: RequestOptions): Self
} = /* @__PURE__ */ dual(2, <Self extends Scoped>(self: Self, options: RequestOptions): Self => {
  if (Stream.isStream(self)) {
    return Stream.unwrap(
      Effect.map(CurrentRequestOptions, (outer) => Stream.provideService(self, CurrentRequestOptions, merge(outer, options)))
    ) as Self
  }
  return Effect.flatMap(
    CurrentRequestOptions,
    (outer) => Effect.provideService(self as Effect.Effect<unknown, unknown, unknown>, CurrentRequestOptions, merge(outer, options))
  ) as Self
})
