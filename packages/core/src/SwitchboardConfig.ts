/**
 * Where the service is and how to talk to it: base URL, API key (kept in
 * `Redacted` from here to the header), timeouts, retries and the task-status
 * request shape.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Schedule from "effect/Schedule"
import { InvalidRequestError } from "./SwitchboardError.js"
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
  readonly timeout?: Duration.DurationInput | undefined
  /** Retries after the first attempt for transient failures. Default 2. */
  readonly maxRetries?: number | undefined
  /** First backoff delay; doubles each retry, jittered. Default 500 ms. */
  readonly retryBaseDelay?: Duration.DurationInput | undefined
  /** Upper bound of any wait between retries, `Retry-After` included. Default 60 s. */
  readonly maxRetryDelay?: Duration.DurationInput | undefined
  /** Time limit for the first byte of a stream. Default 60 s. */
  readonly streamFirstByteTimeout?: Duration.DurationInput | undefined
  /** Time limit between two events of a stream. Default 60 s. */
  readonly streamIdleTimeout?: Duration.DurationInput | undefined
  /** Name of the task id field in a task-status request. Default `task_id`. */
  readonly taskIdField?: string | undefined
  /** The wait between status calls of a video task, unless a call gives its own. Default `TaskPoller.defaultSchedule`. */
  readonly pollSchedule?: Schedule.Schedule<unknown> | undefined
  /** How long a video task is polled before `TaskTimeoutError`, unless a call says. Default 10 minutes. */
  readonly pollDeadline?: Duration.DurationInput | undefined
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
  readonly taskIdField: string
  readonly pollSchedule: Schedule.Schedule<unknown>
  readonly pollDeadline: Duration.Duration
  readonly headers: Readonly<Record<string, string>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class SwitchboardConfig extends Context.Tag("@switchboard/core/SwitchboardConfig")<
  SwitchboardConfig,
  ResolvedConfig
>() {}

/** `https://host/` and `https://host/v1/` both become `https://host/v1`. */
const apiUrlOf = (baseUrl: string): string => {
  const trimmed = baseUrl.trim().replace(/\/+$/, "")
  return /\/v1$/.test(trimmed) ? trimmed : `${trimmed}/v1`
}

const durationOr = (input: Duration.DurationInput | undefined, fallback: Duration.DurationInput) =>
  Duration.decode(input ?? fallback)

/**
 * Validates options and fills in the defaults.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<ResolvedConfig, InvalidRequestError> => {
  if (!/^https?:\/\/[^\s/]+/i.test(options.baseUrl.trim())) {
    return Effect.fail(
      new InvalidRequestError({ field: "baseUrl", message: "baseUrl must be an http(s) URL" })
    )
  }
  const maxRetries = options.maxRetries ?? 2
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    return Effect.fail(
      new InvalidRequestError({ field: "maxRetries", message: "maxRetries must be a non-negative integer" })
    )
  }
  const key = options.apiKey
  return Effect.succeed({
    apiUrl: apiUrlOf(options.baseUrl),
    apiKey: key === undefined || key === "" ? Option.none() : Option.some(typeof key === "string" ? Redacted.make(key) : key),
    timeout: durationOr(options.timeout, "60 seconds"),
    maxRetries,
    retryBaseDelay: durationOr(options.retryBaseDelay, "500 millis"),
    maxRetryDelay: durationOr(options.maxRetryDelay, "60 seconds"),
    streamFirstByteTimeout: durationOr(options.streamFirstByteTimeout, "60 seconds"),
    streamIdleTimeout: durationOr(options.streamIdleTimeout, "60 seconds"),
    taskIdField: options.taskIdField ?? "task_id",
    pollSchedule: options.pollSchedule ?? TaskPoller.defaultSchedule,
    pollDeadline: durationOr(options.pollDeadline, TaskPoller.defaultDeadline),
    headers: options.headers ?? {}
  })
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<SwitchboardConfig, InvalidRequestError> =>
  Layer.effect(SwitchboardConfig, make(options))

/**
 * Reads `SWITCHBOARD_BASE_URL` and `SWITCHBOARD_API_KEY` (as `Redacted`).
 * Other options may be given in code.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Omit<Options, "baseUrl" | "apiKey"> = {}
): Layer.Layer<SwitchboardConfig, InvalidRequestError | ConfigError.ConfigError> =>
  Layer.effect(
    SwitchboardConfig,
    Effect.flatMap(
      Config.all({
        baseUrl: Config.string("SWITCHBOARD_BASE_URL"),
        // Read as a string, then redacted: `Config.redacted` redacts the
        // "missing" explanation too, leaving `Missing data at …: "<redacted>"`.
        apiKey: Config.map(Config.string("SWITCHBOARD_API_KEY"), Redacted.make)
      }),
      (env) => make({ ...options, ...env })
    )
  )
