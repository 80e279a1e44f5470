/**
 * `switchboard chat "<prompt>"`: the reply streamed to the terminal as it
 * arrives, or with `--json` the whole completion (the streamed chunks
 * folded by `Chat.accumulate`).
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { Attachment, Chat, type Protocol } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Connection from "../Connection.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/**
 * @since 0.1.0
 * @category defaults
 */
export const defaultModel = "gpt-4o-mini"

/**
 * @since 0.1.0
 * @category models
 */
export interface ChatOptions {
  readonly prompt: string
  readonly model: string
  /** Files, http(s) URLs or data URIs. */
  readonly images: ReadonlyArray<string>
  /** The media type of image files that are not PNG, JPEG, GIF or WebP. */
  readonly mediaType?: string | undefined
  readonly maxTokens?: number | undefined
}

/**
 * The chat request: the prompt, with one image part per `--image`.
 *
 * @since 0.1.0
 * @category programs
 */
export const request = (options: ChatOptions) =>
  Effect.map(Effect.forEach(options.images, (image) => Inputs.attachment(image, options.mediaType)), (attachments): Protocol.ChatRequest => ({
    model: options.model,
    messages: [attachments.length === 0 ? { role: "user", content: options.prompt } : Attachment.message(options.prompt, ...attachments)],
    ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens })
  }))

/**
 * Writes the reply's text as it arrives, each line prefixed with `indent`,
 * and ends the line.
 *
 * @since 0.1.0
 * @category programs
 */
export const streamReply = (chatRequest: Protocol.ChatRequest, indent = "") =>
  Effect.suspend(() => {
    const indented = Output.indenter(indent)
    let written = false
    return Chat.streamText(chatRequest).pipe(
      Stream.runForEach((text) => {
        written = true
        return Output.write(indented(text))
      }),
      Effect.ensuring(Effect.suspend(() => (written ? Output.write("\n") : Effect.void)))
    )
  })

/**
 * @since 0.1.0
 * @category programs
 */
export const program = (options: ChatOptions & { readonly json: boolean }) =>
  Effect.flatMap(request(options), (chatRequest) =>
    options.json
      ? Effect.flatMap(Chat.accumulate(Chat.stream(chatRequest)), (completion) => Output.line(JSON.stringify(completion, null, 2)))
      : streamReply(chatRequest))

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "chat",
  {
    prompt: Argument.String("prompt").pipe(Argument.withDescription("What to say to the model")),
    model: Inputs.text("model").pipe(Inputs.withDefault(defaultModel, "The chat model")),
    image: Inputs.text("image", "file|url").pipe(
      Inputs.repeated("An image to send with the prompt: a file, or an http(s) URL")
    ),
    mediaType: Inputs.mediaType,
    maxTokens: Inputs.atLeast("max-tokens", 1).pipe(Flag.optional, Flag.withDescription("Limit the reply's length, in tokens")),
    json: Inputs.boolean("json").pipe(Flag.withDescription("Print the final completion as JSON instead of streaming")),
    ...Connection.flags
  },
  (flags) =>
    Connection.run(
      flags,
      program({
        prompt: flags.prompt,
        model: flags.model,
        images: flags.image,
        mediaType: Option.getOrUndefined(flags.mediaType),
        maxTokens: Option.getOrUndefined(flags.maxTokens),
        json: flags.json
      })
    )
).pipe(Command.withDescription("Chat with a model; the reply streams to the terminal as it arrives"))
