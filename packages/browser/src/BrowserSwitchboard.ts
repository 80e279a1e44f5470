/**
 * Every Switchboard capability in a web page, over `fetch`: response bodies
 * are read as streams (a streamed chat renders as it arrives), video tasks are
 * journaled in `localStorage` so a reloaded page resumes them, and a raw API
 * key is refused unless the caller says it knows what it is doing.
 *
 * The recommended set-up gives the page no key at all: `baseUrl` points at a
 * same-origin proxy that adds the key on the server (`docs/browser.md`).
 *
 * @since 0.1.0
 */
import * as Chat from "@switchboard/core/Chat"
import * as EffectVersion from "@switchboard/core/EffectVersion"
import * as Switchboard from "@switchboard/core/Switchboard"
import * as SwitchboardConfig from "@switchboard/core/SwitchboardConfig"
import type { ConfigurationError, JournalError } from "@switchboard/core/SwitchboardError"
import type * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Transport from "@switchboard/core/Transport"
import { RefuseSecretHeaders, secretHeaderIn } from "@switchboard/core/internal/secrets"
import * as BrowserHttpWire from "./BrowserHttpWire.js"
import * as BrowserTaskJournal from "./BrowserTaskJournal.js"

/**
 * The core options, plus the key guard and where video tasks are journaled.
 *
 * `baseUrl` may be relative (`"/"`, `"/switchboard"`): it is resolved against
 * the page's address, which is what a same-origin proxy wants.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends SwitchboardConfig.Options {
  /**
   * Lets a page hold a raw API key: `apiKey`, or any header the SDK treats
   * as a secret (and redacts from errors): `authorization`, `x-api-key`,
   * `api-key`, any name with `auth`, `key`, `token`, `secret`, `cookie`,
   * `password` or `session` in it.
   * Anyone who loads the page can read it, so only for a local emulator, a
   * throw-away key or a trusted internal tool. Default `false`: the layer
   * fails with `ApiKeyInBrowserError`, and a call given such a header per
   * call (`Switchboard.withRequestOptions`) with a `ConfigurationError` on
   * `requestOptions.headers.<name>`, before anything is sent.
   */
  readonly allowApiKeyInBrowser?: boolean | undefined
  /**
   * Where submitted video tasks are recorded until they end. Default `auto`:
   * `localStorage` when the page may use it, else memory. Any other
   * `TaskJournal` layer (IndexedDB, a server) can be given instead.
   */
  readonly journal?: BrowserTaskJournal.Storage | Layer.Layer<TaskJournal.TaskJournal, JournalError> | undefined
}

/**
 * What `layer` provides: every core service, the configuration and the task
 * journal.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Switchboard.Services | SwitchboardConfig.SwitchboardConfig | TaskJournal.TaskJournal

/**
 * A raw API key was given to the browser layer. A key in a page is a key
 * published: view-source, the network panel and every extension can read it.
 * `where` says how it was given: `apiKey`, or `headers.<name>` (in lower
 * case) for a secret header (`headers.authorization`, `headers.x-api-key`).
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiKeyInBrowserError extends Schema.TaggedError<ApiKeyInBrowserError>()("ApiKeyInBrowserError", {
  where: Schema.String,
  message: Schema.String
}) {}

/**
 * Whether a value is the `ApiKeyInBrowserError` that refuses a key given to
 * a page.
 *
 * @since 0.1.0
 * @category guards
 */
export const isApiKeyInBrowserError: (u: unknown) => u is ApiKeyInBrowserError = (u): u is ApiKeyInBrowserError =>
  Predicate.isTagged(u, "ApiKeyInBrowserError")

const guardMessage = (subject: string, where: string) =>
  `${subject} was given an API key (${where}). Anything a page holds can be read by whoever loads ` +
  `it, so the key would leak. Give the page no key and point baseUrl at a same-origin proxy that adds the key on ` +
  `your server (e.g. baseUrl: "/" with a server forwarding /v1/* to the service; see docs/browser.md). ` +
  `For a local emulator or a trusted internal tool, pass allowApiKeyInBrowser: true.`

/**
 * The way a key was given, if one was: `apiKey`, or the first header that
 * `Transport` redacts as a secret (the same rule, `secretHeaderIn`).
 */
const keyGiven = (options: Options): string | undefined => {
  const key = options.apiKey
  if (key !== undefined && (typeof key === "string" ? key : Redacted.value(key)).trim() !== "") return "apiKey"
  const header = secretHeaderIn(options.headers ?? {})
  return header === undefined ? undefined : `headers.${header}`
}

/**
 * The key guard alone: fails with `ApiKeyInBrowserError` when the options
 * carry a key and `allowApiKeyInBrowser` is not `true`.
 *
 * @since 0.1.0
 * @category guards
 */
export const checkApiKey = (options: Options): Effect.Effect<void, ApiKeyInBrowserError> => {
  const where = options.allowApiKeyInBrowser === true ? undefined : keyGiven(options)
  return where === undefined ? Effect.void : Effect.fail(new ApiKeyInBrowserError({ where, message: guardMessage("BrowserSwitchboard.layer", where) }))
}

/** `"/"` → `https://app.example/` in a page; absolute URLs are kept as they are. */
const resolveBaseUrl = (baseUrl: string): string => {
  const page = (globalThis as { readonly location?: { readonly href?: string } }).location?.href
  if (page === undefined || /^[a-z][a-z0-9+.-]*:/i.test(baseUrl.trim())) return baseUrl
  try {
    return new URL(baseUrl.trim(), page).href
  } catch {
    return baseUrl
  }
}

const journalLayer = (journal: Options["journal"]): Layer.Layer<TaskJournal.TaskJournal, JournalError> =>
  journal === undefined || typeof journal === "string" ? BrowserTaskJournal.layer(journal) : journal

/** The configuration after the key guard, with `baseUrl` resolved against the page's address. */
const configLayer = (
  options: Options
): Layer.Layer<SwitchboardConfig.SwitchboardConfig, ApiKeyInBrowserError | ConfigurationError> =>
  Layer.effect(
    SwitchboardConfig.SwitchboardConfig,
    Effect.andThen(checkApiKey(options), SwitchboardConfig.make({ ...options, baseUrl: resolveBaseUrl(options.baseUrl) }))
  )

/**
 * The same guard for each call: a secret header given per call
 * (`Switchboard.withRequestOptions({ headers })`) fails that call with a
 * `ConfigurationError` naming it (`requestOptions.headers.x-api-key`)
 * before anything is sent. `Transport` applies it, so every capability and
 * stream is covered; none with `allowApiKeyInBrowser: true`.
 */
const callGuard = (options: Options): Layer.Layer<never> =>
  options.allowApiKeyInBrowser === true ?
    Layer.empty :
    Layer.succeed(RefuseSecretHeaders, (field: string) => guardMessage("A call under BrowserSwitchboard.layer", field))

// Each SDK layer is fresh: Effect 4 memoizes layers by reference across nested
// `Effect.provide`s, and `Switchboard.layer` (or `Chat.layer`) is one constant, so
// a layer provided inside another would get the outer one's services.

/**
 * Every capability over `fetch` (`BrowserHttpWire`). Fails when built with `ApiKeyInBrowserError`
 * if a key is given without `allowApiKeyInBrowser: true`, and with
 * `ConfigurationError` for a bad `baseUrl`.
 *
 * @example
 * ```ts
 * import * as BrowserSwitchboard from "@switchboard/browser/BrowserSwitchboard"
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Effect from "effect/Effect"
 *
 * // The page talks to its own origin; the server adds the key (docs/browser.md).
 * const ask = () =>
 *   Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).pipe(
 *     Effect.provide(BrowserSwitchboard.layer({ baseUrl: "/" })),
 *     Effect.runPromise
 *   )
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<Services, ApiKeyInBrowserError | ConfigurationError | JournalError> =>
  EffectVersion.guard(Layer.fresh(Switchboard.layer.pipe(
    Layer.provideMerge(configLayer(options)),
    Layer.provideMerge(journalLayer(options.journal)),
    Layer.provide(callGuard(options)),
    Layer.provide(BrowserHttpWire.layer)
  )))

/**
 * What `layerChat` provides.
 *
 * @since 0.1.0
 * @category models
 */
export type ChatServices = Chat.Chat | Transport.Transport | SwitchboardConfig.SwitchboardConfig

/**
 * Chat alone (`Chat.create`, `Chat.stream`, `Chat.streamText`), with the
 * same guard and configuration as `layer`. A page that only chats bundles
 * none of the other capabilities, the task journal or the retry of video
 * tasks: about 12 KB of gzip less (docs/browser.md, bundle size).
 *
 * @example
 * ```ts
 * import * as BrowserSwitchboard from "@switchboard/browser/BrowserSwitchboard"
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 *
 * const reply = (output: { append: (text: string) => void }) =>
 *   Chat.streamText({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).pipe(
 *     Stream.runForEach((delta) => Effect.sync(() => output.append(delta))),
 *     Effect.provide(BrowserSwitchboard.layerChat({ baseUrl: "/" }))
 *   )
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layerChat = (options: Options): Layer.Layer<ChatServices, ApiKeyInBrowserError | ConfigurationError> =>
  EffectVersion.guard(Layer.fresh(Chat.layer.pipe(
    Layer.provideMerge(Transport.layer),
    Layer.provideMerge(configLayer(options)),
    Layer.provide(callGuard(options)),
    Layer.provide(BrowserHttpWire.layer)
  )))
