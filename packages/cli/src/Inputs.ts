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
    return parsed !== undefined && Duration.greaterThan(parsed, Duration.zero)
      ? Effect.succeed(parsed)
      : Effect.fail(
        ValidationError.invalidValue(HelpDoc.p(`--${name}: "${text}" is not a duration; try 500ms, 2s, 5m or 1h`))
      )
  })

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
 * @effect/cli spells one-letter flags with one dash (`-n`); `--n`, as the
 * service's field is named, is accepted too.
 *
 * @since 0.1.0
 * @category arguments
 */
export const normalizeArgs = (argv: ReadonlyArray<string>): ReadonlyArray<string> =>
  argv.flatMap((arg) => (arg === "--n" ? ["-n"] : arg.startsWith("--n=") ? ["-n", arg.slice(4)] : [arg]))

/**
 * An image to send: an http(s) URL or data URI as is, anything else read
 * from disk (PNG, JPEG, GIF or WebP, at most 20 MiB).
 *
 * @since 0.1.0
 * @category images
 */
export const attachment = (source: string): Effect.Effect<Attachment.Attachment, Attachment.AttachmentError> =>
  /^(https?:|data:)/i.test(source) ? Attachment.fromUrl(source) : NodeAttachment.fromFile(source)
