/**
 * Flags and arguments shared by several commands: durations, and images
 * given as a file or a URL.
 *
 * @since 0.1.0
 */
import { Attachment, SwitchboardConfig, SwitchboardError } from "@switchboard/core"
import { NodeAttachment } from "@switchboard/node"
import * as CliError from "effect/cli/CliError"
import * as Flag from "effect/cli/Flag"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Errors from "./Errors.js"

/**
 * A usage error of a flag's value, as the one line to print.
 *
 * @since 0.1.0
 * @category errors
 */
export const invalid = (message: string): Effect.Effect<never, CliError.CliError> =>
  Effect.fail(new CliError.ValidationError({ message }))

/**
 * A flag holding text, named `text` in the help as the 3 edition did
 * (effect/cli's own name for it is `string`).
 *
 * @since 0.1.0
 * @category text
 */
export const text = (name: string, metavar = "text"): Flag.Flag<string> =>
  Flag.String(name).pipe(Flag.withMetavar(metavar))

/**
 * A flag that is on when given, off when not (effect/cli's booleans are
 * required unless given a default).
 *
 * @since 0.1.0
 * @category text
 */
export const boolean = (name: string): Flag.Flag<boolean> => Flag.Boolean(name).pipe(Flag.withDefault(false))

/**
 * A flag given any number of times; its description says so, which the help
 * reads to mark it (effect/cli's help document does not).
 *
 * @since 0.1.0
 * @category text
 */
export const repeated = (description: string) => <A>(self: Flag.Flag<A>): Flag.Flag<ReadonlyArray<A>> =>
  self.pipe(Flag.atLeast(0), Flag.withDescription(`${description} ${repeatedMark}`))

/**
 * The mark `repeated` puts at the end of a description.
 *
 * @since 0.1.0
 * @category text
 */
export const repeatedMark = "(repeatable)"

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/**
 * `500ms`, `2s`, `1.5m`, `1h` (a bare number is seconds) → a duration.
 *
 * @since 0.1.0
 * @category durations
 */
export const parseDuration = (text: string): Duration.Duration | undefined => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text)
  if (!match) return undefined
  return Duration.millis(Number(match[1]) * units[(match[2] ?? "s").toLowerCase()]!)
}

/**
 * The shortest wait between two status calls a flag may ask for: polling
 * faster only loads the service (a task takes seconds at least).
 *
 * @since 1.1.0
 * @category durations
 */
export const minimumPollInterval: Duration.Duration = Duration.millis(100)

/**
 * A flag holding a positive duration (at least `minimum` when given),
 * rejected as a usage error naming the flag when it is not one. The range
 * is the library's own check (`SwitchboardConfig.duration`).
 *
 * @since 0.1.0
 * @category durations
 */
export const duration = (name: string, minimum?: Duration.Duration): Flag.Flag<Duration.Duration> =>
  Flag.mapEffect(text(name, "duration"), (value) => {
    const parsed = parseDuration(value)
    if (parsed === undefined) return invalid(`--${name}: "${value}" is not a duration; try 500ms, 2s, 5m or 1h`)
    if (Duration.isZero(parsed)) return invalid(`--${name}: the duration must be positive, not "${value}"; try 500ms, 2s, 5m or 1h`)
    return Result.match(SwitchboardConfig.duration(`--${name}`, parsed, minimum), {
      onSuccess: Effect.succeed,
      onFailure: () => invalid(`--${name}: "${value}" is too short; it must be at least ${Duration.format(minimum ?? Duration.zero)}`)
    })
  })

/** The flag as it is typed: `-n`, `--max-tokens`. */
const flag = (name: string) => (name.length === 1 ? `-${name}` : `--${name}`)

/**
 * A flag holding a whole number; anything else is a usage error naming the
 * flag, in the words the 3 edition used (effect/cli's own integer says
 * `Invalid value for flag --max-tokens: "abc". Expected: ...`).
 *
 * @since 0.1.0
 * @category numbers
 */
export const integer = (name: string, metavar = "n"): Flag.Flag<number> =>
  Flag.mapEffect(text(name, metavar), (value) =>
    /^[+-]?\d+$/.test(value.trim()) ? Effect.succeed(Number(value)) : invalid(`${flag(name)}: "${value}" is not a whole number`))

/**
 * A flag holding a TCP port, 0 to 65535; anything else is a usage error.
 *
 * @since 0.1.0
 * @category numbers
 */
export const port = (name: string): Flag.Flag<number> =>
  Flag.mapEffect(integer(name, "port"), (n) =>
    n >= 0 && n <= 65535 ? Effect.succeed(n) : invalid(`--${name}: ${n} is not a port; give 1 to 65535, or 0 for any free port`))

/**
 * A flag holding a whole number of at least `min`; anything else is a usage error.
 *
 * @since 0.1.0
 * @category numbers
 */
export const atLeast = (name: string, min: number): Flag.Flag<number> =>
  Flag.mapEffect(integer(name), (n) => n >= min ? Effect.succeed(n) : invalid(`--${name}: ${n} is not allowed; it must be at least ${min}`))

/**
 * A flag taking one of `values`; anything else is a usage error naming the
 * flag and the values allowed.
 *
 * @since 0.1.0
 * @category choices
 */
export const choice = <const A extends string>(name: string, values: ReadonlyArray<A>): Flag.Flag<A> =>
  Flag.mapEffect(text(name, values.join("|")), (value) =>
    values.includes(value as A) ? Effect.succeed(value as A) : invalid(`--${name}: "${value}" is not one of ${values.join(", ")}`))

/**
 * A flag's default and its description, which says the default (effect/cli's
 * help document does not carry it).
 *
 * @since 0.1.0
 * @category defaults
 */
export const withDefault = <A extends string | number>(value: A, description: string) =>
<B>(self: Flag.Flag<B>): Flag.Flag<A | B> =>
  self.pipe(Flag.withDefault(value), Flag.withDescription(`${description} (default: ${value})`))

/**
 * One-letter flags are spelled with one dash (`-n`); `--n`, as the
 * service's field is named, and `--n=3` are accepted too.
 *
 * @since 0.1.0
 * @category arguments
 */
export const normalizeArgs = (argv: ReadonlyArray<string>): ReadonlyArray<string> =>
  argv.flatMap((arg) => (arg === "--n" ? ["-n"] : arg.startsWith("--n=") ? ["-n", arg.slice(4)] : [arg]))

/**
 * The flag naming the media type of image files that are not PNG, JPEG,
 * GIF or WebP (those are recognised by their first bytes).
 *
 * @since 0.1.0
 * @category images
 */
export const mediaType = text("media-type", "type").pipe(
  Flag.optional,
  Flag.withDescription("The media type of an image file that is not PNG, JPEG, GIF or WebP, e.g. image/heic")
)

/**
 * An image to send: an http(s) URL or data URI as is, anything else read
 * from disk (PNG, JPEG, GIF or WebP, at most 20 MiB; another type when
 * `mediaType` says which). Another scheme (`ftp:`, `file:`) is refused as
 * such rather than looked for on disk.
 *
 * @since 0.1.0
 * @category images
 */
export const attachment = (
  source: string,
  mediaType?: string | undefined
): Effect.Effect<Attachment.Attachment, Attachment.AttachmentError | SwitchboardError.ConfigurationError> => {
  if (/^(https?:|data:)/i.test(source)) return Attachment.fromUrl(source)
  // Two letters at least: `C:\photo.png` is a Windows path, not a scheme.
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(source)?.[1]
  return scheme !== undefined
    ? Effect.fail(
      new Attachment.AttachmentError({
        source,
        reason: "InvalidUrl",
        message: `${source}: the ${scheme}: scheme is not supported; give a file, an http(s) URL or a data URI`
      })
    )
    : NodeAttachment.fromFile(source, mediaType === undefined ? {} : { mediaType })
}

/**
 * The most a secret file may hold: a key or a URL is far shorter, and a
 * file past it (a wrong path, `/dev/zero`) is never read whole.
 */
const maxSecretFileBytes = 64 * 1024

/**
 * A secret given as a file (`--api-key-file`, `--database-file`): its first
 * line that is not blank, trimmed, `Redacted`. A file that cannot be read,
 * holds nothing or holds more than 64 KiB is a usage error naming the flag
 * (never quoting the file); no more than that is ever read.
 *
 * @since 1.1.0
 * @category secrets
 */
export const secretFile = (flag: string, path: string): Effect.Effect<Redacted.Redacted<string>, Errors.UsageError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    // One byte past the limit tells a file too large.
    const parts = yield* fs.stream(path, { bytesToRead: maxSecretFileBytes + 1 }).pipe(
      Stream.runCollect,
      Effect.mapError((error) => new Errors.UsageError({ message: `--${flag} ${path} cannot be read: ${error.message}` }))
    )
    const bytes = Buffer.concat(parts)
    if (bytes.length > maxSecretFileBytes) {
      return yield* new Errors.UsageError({
        message: `--${flag} ${path} is larger than ${maxSecretFileBytes / 1024} KiB: write the value alone on its first line`
      })
    }
    const line = bytes.toString("utf8").split(/\r?\n/).map((l) => l.trim()).find((l) => l !== "")
    return line === undefined
      ? yield* new Errors.UsageError({ message: `--${flag} ${path} is empty: write the value on its first line` })
      : Redacted.make(line)
  })
