/**
 * Where the service is and how to talk to it: base URL, API key (kept in
 * `Redacted` from here to the header), timeouts, retries and the task-status
 * request shape.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import type * as Schedule from "effect/Schedule"
import * as Checks from "./internal/checks.js"
import { fromEnvironment } from "./internal/environment.js"
import { ConfigurationError } from "./SwitchboardError.js"
import * as TaskPoller from "./TaskPoller.js"

/**
 * What a user passes to `layer`. Only `baseUrl` is required; a page that talks
 * to a same-origin proxy passes no key.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The service's base address, with or without the `/v1` suffix. */
  readonly baseUrl: string
  readonly apiKey?: Redacted.Redacted<string> | string | undefined
  /** Whole-request time limit for JSON calls, per attempt. Default 60 s. */
  readonly timeout?: Duration.Input | undefined
  /** Retries after the first attempt for transient failures. Default 2. */
  readonly maxRetries?: number | undefined
  /** First backoff delay; doubles each retry, jittered. Default 500 ms. */
  readonly retryBaseDelay?: Duration.Input | undefined
  /** Upper bound of any wait between retries, `Retry-After` included. Default 60 s. */
  readonly maxRetryDelay?: Duration.Input | undefined
  /** Time limit for the first byte of a stream. Default 60 s. */
  readonly streamFirstByteTimeout?: Duration.Input | undefined
  /** Time limit between two events of a stream. Default 60 s. */
  readonly streamIdleTimeout?: Duration.Input | undefined
  /** Time limit of a whole stream, from the request to its last event. Default 10 minutes. */
  readonly streamTotalTimeout?: Duration.Input | undefined
  /**
   * Most bytes of a JSON reply (and of the events an `accumulate` gathers);
   * past it a `ResponseTooLargeError`, the connection closed. Default 32 MiB.
   */
  readonly maxResponseBytes?: number | undefined
  /** Name of the task id field in a task-status request. Default `task_id`. */
  readonly taskIdField?: string | undefined
  /** The wait between status calls of a video task, unless a call gives its own. Default `TaskPoller.defaultSchedule`. */
  readonly pollSchedule?: Schedule.Schedule<unknown> | undefined
  /** How long a video task is polled before `TaskTimeoutError`, unless a call says. Default 10 minutes. */
  readonly pollDeadline?: Duration.Input | undefined
  /** Extra headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * The resolved configuration every service reads.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedConfig {
  /** Base URL ending in `/v1`, without a trailing slash. */
  readonly apiUrl: string
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly timeout: Duration.Duration
  readonly maxRetries: number
  readonly retryBaseDelay: Duration.Duration
  readonly maxRetryDelay: Duration.Duration
  readonly streamFirstByteTimeout: Duration.Duration
  readonly streamIdleTimeout: Duration.Duration
  readonly streamTotalTimeout: Duration.Duration
  readonly maxResponseBytes: number
  readonly taskIdField: string
  /**
   * `undefined`: `TaskPoller.defaultSchedule`, applied where tasks are polled,
   * so that a bundle without `Videos` does not carry its combinators.
   */
  readonly pollSchedule: Schedule.Schedule<unknown> | undefined
  readonly pollDeadline: Duration.Duration
  readonly headers: Readonly<Record<string, string>>
}

/**
 * The service that holds the resolved config: address, key, timeouts,
 * retries and limits.
 *
 * @since 0.1.0
 * @category tags
 */
export class SwitchboardConfig extends Context.Service<SwitchboardConfig, ResolvedConfig>()(
  "@switchboard/core/SwitchboardConfig"
) {}

/** `https://host/` and `https://host/v1/` both become `https://host/v1`. */
const apiUrlOf = (baseUrl: string): string => {
  const trimmed = baseUrl.trim().replace(/\/+$/, "")
  return /\/v1$/.test(trimmed) ? trimmed : `${trimmed}/v1`
}

/**
 * A duration given by a caller (a time limit, a wait), checked: see
 * `internal/checks.ts`, the one check of every duration option.
 *
 * @since 0.1.0
 * @category validation
 */
export const duration: (
  field: string,
  input: unknown,
  minimum?: Duration.Duration
) => Result.Result<Duration.Duration, ConfigurationError> = Checks.duration

const durationOr = (field: keyof Options, options: Options, fallback: Duration.Input) =>
  duration(field, options[field] ?? fallback)

const invalid = (field: string, message: string) => Result.fail(new ConfigurationError({ field, message: `${field} ${message}` }))

// Every runtime the SDK runs on (Node 20+, browsers) has the WHATWG `URL`;
// core is built without DOM or Node typings, hence the declaration.
declare const URL: new(input: string) => {
  readonly protocol: string
  readonly hostname: string
  readonly username: string
  readonly password: string
  readonly search: string
  readonly hash: string
}

/**
 * An http(s) URL that parses, host and port included. Credentials in it are
 * refused: no wire sends them (the key goes in `apiKey`), and the resolved
 * config would show them. A query or fragment is refused too: the paths are
 * appended after it, so the requests would go to the wrong place.
 */
const checkBaseUrl = (baseUrl: unknown): Result.Result<string, ConfigurationError> => {
  if (typeof baseUrl !== "string") return invalid("baseUrl", "must be an http(s) URL")
  let url: InstanceType<typeof URL>
  try {
    url = new URL(baseUrl.trim())
  } catch {
    return invalid("baseUrl", "must be an http(s) URL with a host and a valid port")
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    return invalid("baseUrl", "must be an http(s) URL with a host and a valid port")
  }
  if (url.username !== "" || url.password !== "") {
    return invalid("baseUrl", "must not carry credentials (user:password@): they are never sent; pass the key as apiKey")
  }
  // An empty `?` or `#` is no query or fragment to `URL`, but the paths would still follow it.
  if (url.search !== "" || url.hash !== "" || /[?#]/.test(baseUrl)) return invalid("baseUrl", "must not have a query or a fragment")
  return Result.succeed(baseUrl)
}

// What every wire can send in a header value: tab, space, visible ASCII and
// Latin-1 (RFC 9110 field-value). Anything else (CR, LF, NUL, other control
// characters, DEL, characters beyond Latin-1) undici refuses on every call
// and `fetch` throws on. A name must be an HTTP token.
const badHeaderValue = /[^\t\x20-\x7e\x80-\xff]/
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
// Headers that frame the exchange or route it: the wire's, never a caller's.
// `connection` only as `close` or `keep-alive`, which undici honours (a
// browser drops it), e.g. to turn keep-alive off.
const wireHeaders = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "expect",
  "te",
  "trailer",
  "proxy-connection"
])
const valueRule = "must be a string of visible ASCII or Latin-1 characters, spaces and tabs (no control characters)"

/**
 * Extra headers: valid names that are not the wire's own (`host`,
 * `content-length`, `transfer-encoding`, …), and values every wire can send.
 * The one rule for the layer's headers and per-call ones. Never echoes a
 * value.
 *
 * @since 0.1.0
 * @category validation
 */
export const checkHeaders = (
  field: string,
  headers: Readonly<Record<string, unknown>>
): Result.Result<void, ConfigurationError> => {
  for (const [name, value] of Object.entries(headers)) {
    if (!headerName.test(name)) return invalid(`${field}.${name}`, "is not a valid header name")
    const lower = name.toLowerCase()
    if (wireHeaders.has(lower) || (lower === "connection" && !/^(close|keep-alive)$/i.test(String(value)))) {
      return invalid(`${field}.${name}`, "is set by the HTTP connection, not by a caller (connection: only close or keep-alive)")
    }
    if (typeof value !== "string" || badHeaderValue.test(value)) return invalid(`${field}.${name}`, valueRule)
  }
  return Result.void
}

/** The key: what a header value may hold (it is sent as `Bearer <key>`). Never echoes it. */
const checkKey = (options: Options): Result.Result<void, ConfigurationError> => {
  const key = options.apiKey
  const keyText = key === undefined ? "" : typeof key === "string" ? key : Redacted.value(key)
  if (typeof keyText !== "string" || badHeaderValue.test(keyText)) return invalid("apiKey", valueRule)
  return Result.void
}

/**
 * A whole number of at least `min`.
 *
 * @since 0.1.0
 * @category validation
 */
export const checkCount: (field: string, value: unknown, min: number) => Result.Result<number, ConfigurationError> =
  Checks.count

/**
 * Validates options and fills in the defaults: a base URL that does not
 * parse or carries credentials, a key or header no wire can send, a negative or NaN
 * time limit or count are `ConfigurationError`s naming the option, and the
 * layer fails to build before anything is sent.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<ResolvedConfig, ConfigurationError> =>
  Effect.fromResult(resolve(options))

const resolve = (options: Options): Result.Result<ResolvedConfig, ConfigurationError> =>
  Result.gen(function*() {
    const baseUrl = yield* checkBaseUrl(options.baseUrl)
    yield* checkKey(options)
    yield* checkHeaders("headers", options.headers ?? {})
    const key = options.apiKey
    return {
      apiUrl: apiUrlOf(baseUrl),
      apiKey: key === undefined || key === "" ? Option.none() : Option.some(typeof key === "string" ? Redacted.make(key) : key),
      timeout: yield* durationOr("timeout", options, "60 seconds"),
      maxRetries: yield* checkCount("maxRetries", options.maxRetries ?? 2, 0),
      retryBaseDelay: yield* durationOr("retryBaseDelay", options, "500 millis"),
      maxRetryDelay: yield* durationOr("maxRetryDelay", options, "60 seconds"),
      streamFirstByteTimeout: yield* durationOr("streamFirstByteTimeout", options, "60 seconds"),
      streamIdleTimeout: yield* durationOr("streamIdleTimeout", options, "60 seconds"),
      streamTotalTimeout: yield* durationOr("streamTotalTimeout", options, "10 minutes"),
      maxResponseBytes: yield* checkCount("maxResponseBytes", options.maxResponseBytes ?? defaultMaxResponseBytes, 1),
      taskIdField: options.taskIdField ?? "task_id",
      pollSchedule: options.pollSchedule,
      pollDeadline: yield* durationOr("pollDeadline", options, TaskPoller.defaultDeadline),
      headers: options.headers ?? {}
    }
  })

/**
 * The default of `maxResponseBytes`: 32 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxResponseBytes = 32 * 1024 * 1024

/**
 * The config from explicit options (address, key, timeouts, retries),
 * checked when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<SwitchboardConfig, ConfigurationError> =>
  Layer.effect(SwitchboardConfig, make(options))

const variables = {
  SWITCHBOARD_BASE_URL: "the service's base address, e.g. https://api.example.com/v1",
  SWITCHBOARD_API_KEY: "the service's key"
} as const

// A class made by a pure call: bundlers keep a class declaration whose method
// key is computed (`Symbol.for`), and with it `Config` and `ConfigProvider`,
// in every page that never reads the environment (0.8 KB gzip,
// docs/decisions.md).
/**
 * A variable of `layerConfig` that is missing or unreadable, said in one
 * line that names it (Effect's own `ConfigError` prints its schema issue
 * and, when a program dies of it, a dump of its fields). Still a
 * `Config.ConfigError` (`_tag` `ConfigError`, the issue as `cause`).
 *
 * @since 1.1.0
 * @category errors
 */
export const MissingVariableError = /* @__PURE__ */ (() =>
  class MissingVariableError extends Config.ConfigError {
    constructor(readonly variable: keyof typeof variables, cause: Config.ConfigError["cause"]) {
      super(cause)
    }
    override get message(): string {
      return `${this.variable} is not set: ${variables[this.variable]} (or give it in code to layer)`
    }
    /**
     * What `console.log` and `util.inspect` show: the message, never the key.
     *
     * @since 0.1.0
     */
    [Symbol.for("nodejs.util.inspect.custom")](): string {
      return `ConfigError: ${this.message}`
    }
  })()

/**
 * A missing or unreadable variable of `layerConfig`, named in one line.
 *
 * @since 1.1.0
 * @category errors
 */
export type MissingVariableError = InstanceType<typeof MissingVariableError>

/** The first of our variables that `error` is about, said in one line. */
const oneLine = (error: Config.ConfigError): Config.ConfigError => {
  const variable = (Object.keys(variables) as Array<keyof typeof variables>).find((name) => error.message.includes(`"${name}"`))
  return variable === undefined ? error : new MissingVariableError(variable, error.cause)
}

/**
 * Reads `SWITCHBOARD_BASE_URL` and `SWITCHBOARD_API_KEY` (as `Redacted`).
 * Other options may be given in code. A missing variable fails with a
 * `MissingVariableError` (a `Config.ConfigError`) naming it in one line.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Omit<Options, "baseUrl" | "apiKey"> = {}
): Layer.Layer<SwitchboardConfig, ConfigurationError | Config.ConfigError> =>
  Layer.effect(
    SwitchboardConfig,
    Effect.flatMap(
      Effect.mapError(
        fromEnvironment(Config.all({
          baseUrl: Config.String("SWITCHBOARD_BASE_URL"),
          // Read as a string, then redacted: `Config.redacted` redacts the
          // "missing" explanation too, leaving `Missing data at …: "<redacted>"`.
          apiKey: Config.map(Config.String("SWITCHBOARD_API_KEY"), Redacted.make)
        })),
        oneLine
      ),
      (env) => make({ ...options, ...env })
    )
  )
