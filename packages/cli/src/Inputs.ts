/**
 * Flags and arguments shared by several commands: durations, and images
 * given as a file or a URL.
 *
 * @since 0.1.0
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import { Attachment } from "@switchboard/core"
import { NodeAttachment } from "@switchboard/node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

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
 * A flag holding a duration, rejected as a usage error when it is not one.
 *
 * @since 0.1.0
 * @category durations
 */
export const duration = (name: string): Options.Options<Duration.Duration> =>
  Options.mapEffect(Options.text(name), (text) => {
    const parsed = parseDuration(text)
    if (parsed === undefined) {
      return Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name}: "${text}" is not a duration; try 500ms, 2s, 5m or 1h`)))
    }
    return Duration.greaterThan(parsed, Duration.zero)
      ? Effect.succeed(parsed)
      : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name}: the duration must be positive, not "${text}"; try 500ms, 2s, 5m or 1h`)))
  })

/** The flag as it is typed: `-n`, `--max-tokens`. */
const flag = (name: string) => (name.length === 1 ? `-${name}` : `--${name}`)

/**
 * A flag holding a whole number; anything else is a usage error naming the
 * flag (@effect/cli's own integer says only "'abc' is not a integer").
 *
 * @since 0.1.0
 * @category numbers
 */
export const integer = (name: string, pseudoName = "n"): Options.Options<number> =>
  Options.mapEffect(Options.text(name).pipe(Options.withPseudoName(pseudoName)), (text) =>
    /^[+-]?\d+$/.test(text.trim())
      ? Effect.succeed(Number(text))
      : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`${flag(name)}: "${text}" is not a whole number`))))

/**
 * A flag holding a TCP port, 0 to 65535; anything else is a usage error.
 *
 * @since 0.1.0
 * @category numbers
 */
export const port = (name: string): Options.Options<number> =>
  Options.mapEffect(integer(name, "port"), (n) =>
    n >= 0 && n <= 65535
      ? Effect.succeed(n)
      : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name}: ${n} is not a port; give 1 to 65535, or 0 for any free port`))))

/**
 * A flag holding a whole number of at least `min`; anything else is a usage error.
 *
 * @since 0.1.0
 * @category numbers
 */
export const atLeast = (name: string, min: number): Options.Options<number> =>
  Options.mapEffect(integer(name), (n) =>
    n >= min
      ? Effect.succeed(n)
      : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name}: ${n} is not allowed; it must be at least ${min}`))))

/**
 * A flag taking one of `values`; anything else is a usage error naming the
 * flag and the values allowed.
 *
 * @since 0.1.0
 * @category choices
 */
export const choice = <const A extends string>(name: string, values: ReadonlyArray<A>): Options.Options<A> =>
  Options.mapEffect(Options.text(name), (text) =>
    values.includes(text as A)
      ? Effect.succeed(text as A)
      : Effect.fail(
        ValidationError.invalidValue(HelpDoc.p(`--${name}: "${text}" is not one of ${values.join(", ")}`))
      ))

/**
 * A flag's default and its description, which says the default (@effect/cli's
 * help does not show it).
 *
 * @since 0.1.0
 * @category defaults
 */
export const withDefault = <A extends string | number>(value: A, description: string) =>
<B>(self: Options.Options<B>): Options.Options<A | B> =>
  self.pipe(Options.withDefault(value), Options.withDescription(`${description} (default: ${value})`))

/**
 * @effect/cli spells one-letter flags with one dash (`-n`); `--n`, as the
 * service's field is named, is accepted too.
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
export const mediaType = Options.text("media-type").pipe(
  Options.withPseudoName("type"),
  Options.optional,
  Options.withDescription("The media type of an image file that is not PNG, JPEG, GIF or WebP, e.g. image/heic")
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
): Effect.Effect<Attachment.Attachment, Attachment.AttachmentError> => {
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
