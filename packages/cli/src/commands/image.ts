/**
 * `switchboard image "<prompt>"`: images generated with `image2` (from text,
 * or from an image with `--from`), saved to disk; their paths are printed,
 * one a line.
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { Images, type Protocol } from "@switchboard/core"
import { NodeMedia } from "@switchboard/node"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Connection from "../Connection.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/**
 * @since 0.1.0
 * @category defaults
 */
export const defaultModel = "image2"

/**
 * @since 0.1.0
 * @category models
 */
export interface ImageOptions {
  readonly prompt: string
  readonly model: string
  readonly size?: Protocol.ImageSize | undefined
  readonly quality?: "standard" | "hd" | undefined
  readonly style?: "vivid" | "natural" | undefined
  readonly n?: number | undefined
  /** Image-to-image: a file, an http(s) URL or a data URI. */
  readonly from?: string | undefined
  /** The media type of a `from` file that is not PNG, JPEG, GIF or WebP. */
  readonly mediaType?: string | undefined
  /** Directory to save into. */
  readonly out: string
  /** File names: `<prefix>-<n>.<ext>`. Default: a slug of the prompt and the time. */
  readonly prefix?: string | undefined
}

const defined = <A extends object>(a: A): { [K in keyof A]: Exclude<A[K], undefined> } =>
  Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as { [K in keyof A]: Exclude<A[K], undefined> }

/**
 * Generates (or transforms) and saves; returns the paths in order.
 *
 * @since 0.1.0
 * @category programs
 */
export const generate = Effect.fn("switchboard.image.generate")(function*(options: ImageOptions) {
  const request = defined({
    prompt: options.prompt,
    model: options.model,
    size: options.size,
    quality: options.quality,
    style: options.style,
    n: options.n
  })
  const images = options.from === undefined
    ? yield* Images.generate(request)
    : yield* Effect.flatMap(Inputs.attachment(options.from, options.mediaType), (source) => Images.transform({ ...request, image: source.url }))
  const prefix = options.prefix ?? `${Output.slug(options.prompt)}-${Output.stamp(yield* Clock.currentTimeMillis)}`
  return yield* NodeMedia.saveImages(images, options.out, prefix)
})

/**
 * @since 0.1.0
 * @category programs
 */
export const program = (options: ImageOptions) =>
  Effect.flatMap(generate(options), (paths) => Effect.forEach(paths, (path) => Output.line(path), { discard: true }))

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "image",
  {
    prompt: Argument.String("prompt").pipe(Argument.withDescription("What to draw (with --from: how to change the image)")),
    size: Inputs.choice("size", ["1024x1024", "1024x1792", "1792x1024"]).pipe(
      Flag.withMetavar("1024x1024|1024x1792|1792x1024"),
      Flag.optional,
      Flag.withDescription("1024x1024 (square), 1024x1792 (portrait) or 1792x1024 (landscape)")
    ),
    quality: Inputs.choice("quality", ["standard", "hd"]).pipe(
      Flag.withMetavar("standard|hd"),
      Flag.optional,
      Flag.withDescription("standard (default) or hd")
    ),
    style: Inputs.choice("style", ["vivid", "natural"]).pipe(Flag.withMetavar("vivid|natural"), Flag.optional, Flag.withDescription("vivid or natural")),
    n: Inputs.integer("n").pipe(Flag.optional, Flag.withDescription("How many images (default 1); --n works too")),
    from: Inputs.text("from").pipe(
      Flag.withMetavar("file|url"),
      Flag.optional,
      Flag.withDescription("Image-to-image: the source image, a file or an http(s) URL")
    ),
    mediaType: Inputs.mediaType,
    out: Inputs.text("out").pipe(Flag.withMetavar("dir"), Inputs.withDefault(".", "Directory to save the images in")),
    model: Inputs.text("model").pipe(Inputs.withDefault(defaultModel, "The image model")),
    ...Connection.flags
  },
  (flags) =>
    Connection.run(
      flags,
      program({
        prompt: flags.prompt,
        model: flags.model,
        size: Option.getOrUndefined(flags.size),
        quality: Option.getOrUndefined(flags.quality),
        style: Option.getOrUndefined(flags.style),
        n: Option.getOrUndefined(flags.n),
        from: Option.getOrUndefined(flags.from),
        mediaType: Option.getOrUndefined(flags.mediaType),
        out: flags.out
      })
    )
).pipe(Command.withDescription("Generate images (text-to-image, or image-to-image with --from) and save them"))
