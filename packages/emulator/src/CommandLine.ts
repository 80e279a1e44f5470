/**
 * The emulator's faults and modes as command-line text, shared by
 * `switchboard emulator` and `switchboard-emulator`, so that a client in any
 * language can be tested against faults without writing Effect code. The
 * grammar is documented in `docs/emulator.md` (From the command line).
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type * as Faults from "./internal/faults.js"

/**
 * Examples of every fault, for usage errors and help.
 *
 * @since 0.1.0
 * @category faults
 */
export const faultExamples =
  "429, 503:retry-after=2, 429:retry-after-ms=500, delay=2s, delay=2s:after-headers, reset, reset-after-headers, truncate=0.3, truncate:close, cut-stream=3, stall-stream=3, error-event=3:message=Overloaded"

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000 }

/**
 * Milliseconds from `500ms`, `2s` or `1m`, or `undefined`.
 *
 * @since 0.1.0
 * @category modes
 */
export const millis = (text: string): number | undefined => {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text)
  return match ? Number(match[1]) * units[match[2]!]! : undefined
}

const whole = (text: string | undefined): number | undefined =>
  text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined

type Parsed = Result.Result<Faults.Fault, string>

/** The fault named `name`, its `value` and its `key[=value]` options. */
const build = (name: string, value: string | undefined, options: ReadonlyMap<string, string | undefined>, spec: string): Parsed => {
  const unknownOption = (keys: ReadonlyArray<string>) => {
    const key = [...options.keys()].find((k) => !keys.includes(k))
    return key === undefined ? undefined : `"${spec}": ${name} takes no option "${key}"${keys.length > 0 ? ` (only ${keys.join(", ")})` : ""}`
  }
  const afterChunks = (tag: "CutStream" | "StallStream" | "ErrorEvent"): Parsed => {
    const n = whole(value)
    if (n === undefined) return Result.fail(`"${spec}": ${name} needs the number of events sent first, e.g. ${name}=3`)
    const wrong = unknownOption(tag === "ErrorEvent" ? ["message"] : [])
    if (wrong) return Result.fail(wrong)
    if (tag !== "ErrorEvent") return Result.succeed({ _tag: tag, afterChunks: n })
    return Result.succeed({ _tag: tag, afterChunks: n, message: options.get("message") ?? "Injected stream error" })
  }
  if (/^\d+$/.test(name)) {
    const status = Number(name)
    if (status < 400 || status > 599) return Result.fail(`"${spec}": a status fault must be from 400 to 599`)
    const wrong = unknownOption(["retry-after", "retry-after-ms"])
    if (wrong) return Result.fail(wrong)
    const retryAfter = options.get("retry-after")
    const retryAfterMs = options.get("retry-after-ms")
    if (options.has("retry-after") && whole(retryAfter) === undefined) return Result.fail(`"${spec}": retry-after must be whole seconds`)
    if (options.has("retry-after-ms") && whole(retryAfterMs) === undefined) return Result.fail(`"${spec}": retry-after-ms must be whole milliseconds`)
    return Result.succeed({
      _tag: "Status",
      status,
      ...(retryAfter === undefined ? {} : { retryAfter: Number(retryAfter) }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs: Number(retryAfterMs) })
    })
  }
  switch (name) {
    case "delay": {
      const delay = value === undefined ? undefined : millis(value)
      if (delay === undefined) return Result.fail(`"${spec}": delay needs a duration, e.g. delay=500ms, delay=2s or delay=1m`)
      const wrong = unknownOption(["after-headers"])
      if (wrong) return Result.fail(wrong)
      return Result.succeed({ _tag: "Delay", delay, ...(options.has("after-headers") ? { afterHeaders: true } : {}) })
    }
    case "reset":
    case "reset-after-headers": {
      const wrong = value === undefined ? unknownOption([]) : `"${spec}": ${name} takes no value`
      if (wrong) return Result.fail(wrong)
      return Result.succeed(name === "reset" ? { _tag: "Reset" } : { _tag: "ResetAfterHeaders" })
    }
    case "truncate": {
      const keep = value === undefined ? undefined : Number(value)
      if (keep !== undefined && !(value !== "" && keep >= 0 && keep <= 1)) {
        return Result.fail(`"${spec}": truncate keeps a share of the body from 0 to 1, e.g. truncate=0.3`)
      }
      const wrong = unknownOption(["close"])
      if (wrong) return Result.fail(wrong)
      return Result.succeed({ _tag: "TruncateBody", ...(keep === undefined ? {} : { keep }), ...(options.has("close") ? { closeConnection: true } : {}) })
    }
    case "cut-stream":
      return afterChunks("CutStream")
    case "stall-stream":
      return afterChunks("StallStream")
    case "error-event":
      return afterChunks("ErrorEvent")
    default:
      return Result.fail(`"${spec}" is not a fault; try ${faultExamples}`)
  }
}

/**
 * One fault from its text: `NAME[=VALUE][:OPTION[=VALUE]]…`, e.g. `429`,
 * `503:retry-after=2`, `delay=2s:after-headers`, `cut-stream=3`. The error
 * says what is wrong with the text.
 *
 * @since 0.1.0
 * @category faults
 */
export const parseFault = (spec: string): Result.Result<Faults.Fault, string> => {
  const [head = "", ...rest] = spec.trim().split(":")
  const [name = "", value] = splitOnce(head)
  const options = new Map(rest.map(splitOnce))
  return build(name.toLowerCase(), value, options, spec)
}

const splitOnce = (text: string): readonly [string, string | undefined] => {
  const at = text.indexOf("=")
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)]
}

/**
 * The faults of a command line, as typed: the script, the random pool, its
 * rate and seed, the paths.
 *
 * @since 0.1.0
 * @category faults
 */
export interface FaultFlags {
  readonly script: ReadonlyArray<Faults.Fault>
  readonly random: ReadonlyArray<Faults.Fault>
  readonly rate: number | undefined
  readonly seed: number | undefined
  readonly paths: ReadonlyArray<string>
}

/**
 * The fault options of a command line, or what makes no sense in it (a rate
 * without faults to pick from, random faults without a rate, a path that is
 * not one).
 *
 * @since 0.1.0
 * @category faults
 */
export const faultOptions = (flags: FaultFlags): Result.Result<Faults.FaultOptions, string> => {
  if (flags.rate !== undefined && !(flags.rate >= 0 && flags.rate <= 1)) return Result.fail(`--fault-rate must be from 0 to 1, not ${flags.rate}`)
  if ((flags.rate ?? 0) > 0 && flags.random.length === 0) return Result.fail("--fault-rate needs at least one --random-fault to pick from")
  if (flags.random.length > 0 && flags.rate === undefined) return Result.fail("--random-fault needs --fault-rate: the share of requests to fault")
  const path = flags.paths.find((p) => !p.startsWith("/"))
  if (path !== undefined) return Result.fail(`--fault-path must be a path such as /v1/chat/completions, not "${path}"`)
  return Result.succeed({
    ...(flags.script.length > 0 ? { script: flags.script } : {}),
    ...(flags.random.length > 0 ? { random: flags.random } : {}),
    ...(flags.rate === undefined ? {} : { rate: flags.rate }),
    ...(flags.seed === undefined ? {} : { seed: flags.seed }),
    ...(flags.paths.length > 0 ? { paths: flags.paths } : {})
  })
}

/**
 * CORS from `--no-cors` and `--cors-origin` (repeated; `*` for any origin).
 *
 * @since 0.1.0
 * @category modes
 */
export const corsOption = (
  off: boolean,
  origins: ReadonlyArray<string>
): Result.Result<boolean | { readonly allowedOrigins: ReadonlyArray<string> | "*" }, string> => {
  if (off && origins.length > 0) return Result.fail("--no-cors and --cors-origin cannot be used together")
  if (off) return Result.succeed(false)
  if (origins.length === 0) return Result.succeed(true)
  return Result.succeed({ allowedOrigins: origins.includes("*") ? "*" : origins })
}

/**
 * Limit mode from `--rate-limit REQUESTS/WINDOW[:tokens=N]`, e.g. `20/1s`,
 * `100/1m:tokens=50000`; the error says what is wrong with the text.
 *
 * @since 1.1.0
 * @category modes
 */
export const parseRateLimit = (
  spec: string
): Result.Result<{ readonly requests: number; readonly tokens?: number; readonly window: number }, string> => {
  const [head = "", ...rest] = spec.trim().split(":")
  const match = /^(\d+)\/(.+)$/.exec(head)
  const window = match ? millis(match[2]!) : undefined
  if (!match || window === undefined || window <= 0) {
    return Result.fail(`--rate-limit takes requests per window, e.g. 20/1s or 100/1m:tokens=50000, not "${spec}"`)
  }
  let tokens: number | undefined
  for (const option of rest) {
    const [key, value] = splitOnce(option)
    if (key !== "tokens" || whole(value) === undefined) return Result.fail(`"${spec}": --rate-limit takes only tokens=N after the window`)
    tokens = Number(value)
  }
  return Result.succeed({ requests: Number(match[1]), window, ...(tokens === undefined ? {} : { tokens }) })
}
