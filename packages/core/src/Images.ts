/**
 * Image generation through chat with the model `image2` (spec 2.5, 4.1 use
 * 3): text-to-image and image-to-image, the images read out of
 * `choices[0].message.content` (decision 4).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as GenAi from "./internal/genAi.js"
import { encoder, plainDecoder } from "./internal/validate.js"
import { truncate } from "./internal/text.js"
import * as Protocol from "./Protocol.js"
import { NoImageInResponseError, type RequestError } from "./SwitchboardError.js"
import { Transport } from "./Transport.js"

/**
 * What `generate` takes: the prompt, and the model, size, quality, style and
 * count of images.
 *
 * @since 0.1.0
 * @category models
 */
export const GenerateRequest = Schema.Struct({
  prompt: Protocol.NonEmptyString,
  /** Default `image2`. */
  model: Schema.optional(Protocol.NonEmptyString),
  size: Schema.optional(Protocol.ImageSize),
  quality: Schema.optional(Protocol.ImageQuality),
  style: Schema.optional(Protocol.ImageStyle),
  n: Schema.optional(Protocol.PositiveInt),
  /** Default 2000 (spec 8). */
  max_tokens: Schema.optional(Protocol.PositiveInt)
})
/**
 * What `generate` takes: the prompt, and the model, size, quality, style and
 * count of images.
 *
 * @since 0.1.0
 * @category models
 */
export type GenerateRequest = typeof GenerateRequest.Type

/**
 * What `transform` takes: the fields of `GenerateRequest` and the source
 * image.
 *
 * @since 0.1.0
 * @category models
 */
export const TransformRequest = GenerateRequest.pipe(Schema.fieldsAssign({
  /** The source image: an http(s) URL or a data URI (see `Attachment`). */
  image: Protocol.ImageAddress
}))
/**
 * What `transform` takes: the fields of `GenerateRequest` and the source
 * image.
 *
 * @since 0.1.0
 * @category models
 */
export type TransformRequest = typeof TransformRequest.Type

/**
 * An image found in a reply: a URL to download, or a data URI.
 *
 * @since 0.1.0
 * @category models
 */
export interface GeneratedImage {
  readonly url: string
  /** The markdown alt text, when the image came as `![alt](url)`. */
  readonly alt?: string | undefined
  /** For data URIs, the media type they declare. */
  readonly mediaType?: string | undefined
}

/** What `(…)` of `![alt](…)` holds: a URL, maybe in `<>`, maybe a `"title"`. */
const markdownTarget = /^\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*$/

/** What may follow a target's URL up to its `)`: `>`, a `"title"`, spaces. */
const afterUrl = /^>?(?:\s+"[^"]*")?\s*$/
const spaces = /\s*/y
const urlEnd = /[\s>]/g

/**
 * Whether `markdownTarget` holds for `content.slice(from, end)`, in time
 * linear over all the openings of a reply. The pattern's URL runs from its
 * first character to the first space or `>` (the first after `<` is the
 * same), and what follows it must be `afterUrl`: openings that share that
 * end share the verdict. Matched one by one, openings whose target is not
 * one were each read to a far `)` (1 MB of them: minutes, the event loop held).
 */
class TargetCheck {
  /** The first space or `>` at or after the last URL start looked at. */
  private urlEnd = -1
  private lastUrlEnd = -1
  private lastEnd = -1
  private lastHolds = false

  constructor(private readonly content: string) {}

  holds(from: number, end: number): boolean {
    spaces.lastIndex = from
    spaces.test(this.content)
    const first = Math.min(spaces.lastIndex, end)
    const url = this.content[first] === "<" ? first + 1 : first
    if (this.urlEnd < url) {
      urlEnd.lastIndex = url
      this.urlEnd = urlEnd.exec(this.content)?.index ?? this.content.length
    }
    const stop = Math.min(this.urlEnd, end)
    // No URL: the pattern needs a character at least, `<` itself when nothing follows it.
    if (stop === first) return false
    if (stop !== this.lastUrlEnd || end !== this.lastEnd) {
      this.lastUrlEnd = stop
      this.lastEnd = end
      this.lastHolds = afterUrl.test(this.content.slice(stop, end))
    }
    return this.lastHolds
  }
}

/**
 * The `![alt](url)` images of `content`, in order, in time linear in its
 * length: one pattern for the whole form backtracked over every `![` or
 * `](` that never closes, quadratic in their number (a reply of 1 MB of
 * them took hours). Each `]` and `)` looked for is kept for the openings
 * before it.
 */
const markdownImages = (content: string): Array<GeneratedImage> => {
  const found: Array<GeneratedImage> = []
  let close = -1
  let end = -1
  const target = new TargetCheck(content)
  for (let start = content.indexOf("!["); start !== -1; start = content.indexOf("![", start + 2)) {
    if (close < start + 2) close = content.indexOf("]", start + 2)
    if (close === -1) break
    if (content[close + 1] !== "(") continue
    if (end < close + 2) end = content.indexOf(")", close + 2)
    if (end === -1) break
    if (!target.holds(close + 2, end)) continue
    const url = markdownTarget.exec(content.slice(close + 2, end))?.[1]
    if (url === undefined) continue
    found.push(withMediaType(url, content.slice(start + 2, close)))
    start = end - 1
  }
  return found
}
const dataUri = /data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]+/gi
const bareUrl = /https?:\/\/[^\s<>()"'\]]+/gi

/**
 * `url` without the sentence's punctuation after it ("see https://x/a.png.").
 * A loop: `/[.,;:!?]+$/` is quadratic in a run of them not at the end.
 */
const withoutTrailingPunctuation = (url: string): string => {
  let end = url.length
  while (end > 0 && ".,;:!?".includes(url[end - 1]!)) end--
  return url.slice(0, end)
}

const withMediaType = (url: string, alt?: string): GeneratedImage => {
  const data = Protocol.parseDataUri(url)
  return { url, ...(alt ? { alt } : {}), ...(data ? { mediaType: data.mediaType } : {}) }
}

/**
 * The images of a reply, by decision 4: markdown images if there are any,
 * else data URIs, else bare http(s) URLs; each kind in the order it appears.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseImages = (content: string): ReadonlyArray<GeneratedImage> => {
  const markdown = markdownImages(content)
  if (markdown.length > 0) return markdown
  const data = [...content.matchAll(dataUri)].map((m) => withMediaType(m[0]))
  if (data.length > 0) return data
  return [...content.matchAll(bareUrl)].map((m) => ({ url: withoutTrailingPunctuation(m[0]) }))
}

/**
 * The image calls: generate images from a prompt, or transform given ones.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly generate: (request: GenerateRequest) => Effect.Effect<ReadonlyArray<GeneratedImage>, ImagesError>
  readonly transform: (request: TransformRequest) => Effect.Effect<ReadonlyArray<GeneratedImage>, ImagesError>
}

/**
 * What `generate` and `transform` fail with: any call's `RequestError`, or
 * a reply without an image.
 *
 * @since 0.2.0
 * @category errors
 */
export type ImagesError = RequestError | NoImageInResponseError

/**
 * The service that makes image calls (see `Service`).
 *
 * @since 0.1.0
 * @category tags
 */
export class Images extends Context.Service<Images, Service>()("@switchboard/core/Images") {}

const validateGenerate = encoder(GenerateRequest)
const validateTransform = encoder(TransformRequest)
const encodeChat = encoder(Protocol.ChatRequest)
const decodeCompletion = plainDecoder(Protocol.ChatCompletion)

type UserContent = Extract<Protocol.Message, { role: "user" }>["content"]

const chatRequestOf = (request: GenerateRequest, content: UserContent): Protocol.ChatRequest => {
  const { max_tokens, model, prompt: _prompt, ...options } = request as TransformRequest
  const { image: _image, ...imageOptions } = options
  return { model: model ?? "image2", max_tokens: max_tokens ?? 2000, messages: [{ role: "user", content }], ...imageOptions }
}

/** Most characters of a reply without an image that its error keeps: a refusal's explanation, not megabytes. */
const maxContentKept = 4000

const imagesOf = (redact: (text: string) => string) => (completion: Protocol.ChatCompletion) => {
  const content = completion.choices[0]?.message.content ?? ""
  const images = parseImages(content)
  return images.length > 0
    ? Effect.succeed(images)
    : Effect.fail(
      new NoImageInResponseError({ message: "the reply holds no image", content: truncate(redact(content), maxContentKept) })
    )
}

/**
 * Builds the image service over the `Transport`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.map(Effect.service(Transport), (transport): Service => {
  const create = (request: Protocol.ChatRequest) =>
    Effect.flatMap(Effect.fromResult(encodeChat(request)), (body) =>
      transport.call({
        method: "POST",
        path: "/chat/completions",
        body,
        decode: decodeCompletion,
        genAi: GenAi.chat(request, "image"),
        // An image is paid for: retried only when the request surely was not
        // received, like a video submission (decision 6).
        retry: "unsent"
      }))
  return {
    generate: (request) =>
      Effect.andThen(
        Effect.fromResult(validateGenerate(request)),
        Effect.flatMap(create(chatRequestOf(request, request.prompt)), imagesOf(transport.redact))
      ),
    transform: (request) =>
      Effect.andThen(
        Effect.fromResult(validateTransform(request)),
        Effect.flatMap(
          create(chatRequestOf(request, [
            { type: "text", text: request.prompt },
            { type: "image_url", image_url: { url: request.image } }
          ])),
          imagesOf(transport.redact)
        )
      )
  }
})

/**
 * The image service over the `Transport`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Images, never, Transport> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(Images, make))

/**
 * Text-to-image with `image2`. Options are validated before sending.
 *
 * @since 0.1.0
 * @category accessors
 */
export const generate = (
  request: GenerateRequest
): Effect.Effect<ReadonlyArray<GeneratedImage>, ImagesError, Images> =>
  Images.use((images) => images.generate(request))

/**
 * Image-to-image with `image2`: a text part and the source image.
 *
 * @since 0.1.0
 * @category accessors
 */
export const transform = (
  request: TransformRequest
): Effect.Effect<ReadonlyArray<GeneratedImage>, ImagesError, Images> =>
  Images.use((images) => images.transform(request))
