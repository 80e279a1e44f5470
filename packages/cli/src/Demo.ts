/**
 * `switchboard demo`: a walk through every capability with readable output,
 * against the emulator started in process on a free port, or against the
 * service when both its base URL and key are given (flags or
 * `SWITCHBOARD_BASE_URL` / `SWITCHBOARD_API_KEY`). It reuses the commands'
 * programs, so what it shows is what the commands do.
 *
 * @since 0.1.0
 */
import { Agent } from "@switchboard/agent"
import { Attachment, Chat, Embeddings, Images, Models, Moderations, type Protocol, Videos } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import { NodeAttachment } from "@switchboard/node"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ChatCommand from "./commands/chat.js"
import * as EmbedCommand from "./commands/embed.js"
import * as ImageCommand from "./commands/image.js"
import * as ModelsCommand from "./commands/models.js"
import * as ModerateCommand from "./commands/moderate.js"
import * as VideoCommand from "./commands/video.js"
import * as Connection from "./Connection.js"
import * as Errors from "./Errors.js"
import * as Output from "./Output.js"

/**
 * The models the demo uses; the emulator offers them all.
 *
 * @since 0.1.0
 * @category models
 */
export const models = {
  chat: ChatCommand.defaultModel,
  image: ImageCommand.defaultModel,
  video: VideoCommand.defaultModel,
  embedding: EmbedCommand.defaultModel
}

/**
 * What every step gets.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context {
  /** Where images and the video go. */
  readonly out: string
  /** The video task journal. */
  readonly journal: string
  readonly videoModel: string
  /** Against the emulator, poll quickly; against the service, the SDK's backoff. */
  readonly pollInterval: Duration.Duration | undefined
  /** What earlier steps made: the image step's file feeds image-to-image. */
  readonly made: { image?: string | undefined }
}

/**
 * One step of `switchboard demo`: its title, what it shows, and the program
 * it runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly title: string
  readonly detail: string
  readonly run: (context: Context) => Effect.Effect<void, unknown, Connection.Services>
}

const say = (text: string) => Output.line(`  ${text}`)
const prompt = (text: string) => say(Output.cyan(`> ${text}`))

/** `PNG 1024×1024, 3.1 KiB` for a PNG, the size otherwise: from stat and the first 24 bytes, never the whole file. */
const describeFile = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const size = Number((yield* fs.stat(path)).size)
    const file = yield* fs.open(path, { flag: "r" })
    const head = Option.getOrElse(yield* file.readAlloc(24), () => new Uint8Array(0))
    const view = Buffer.from(head.buffer, head.byteOffset, head.byteLength)
    const png = head.length >= 24 && view.readUInt32BE(0) === 0x89504e47
    return png ? `PNG ${view.readUInt32BE(16)}×${view.readUInt32BE(20)}, ${Output.bytes(size)}` : Output.bytes(size)
  }).pipe(Effect.scoped, Effect.orElseSucceed(() => "size unknown"))

// ---------------------------------------------------------------------------
// The agent step: two tools the model calls in one step, run side by side.
// ---------------------------------------------------------------------------

const City = Schema.String.annotate({ description: "The city's name, e.g. Paris" })

const GetWeather = Tool.make("get_weather", {
  description: "The current weather in a city",
  parameters: Schema.Struct({ city: City }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite, sky: Schema.String })
})

const GetLocalTime = Tool.make("get_local_time", {
  description: "The local time in a city",
  parameters: Schema.Struct({ city: City }),
  success: Schema.Struct({ city: Schema.String, time: Schema.String }),
  failure: Schema.Struct({ reason: Schema.String })
})

const toolkit = Toolkit.make(GetWeather, GetLocalTime)

/** How long each demo tool takes: long enough to see that the two overlap. */
const toolLatency = Duration.millis(400)

const timeZones: Record<string, string> = {
  "paris": "Europe/Paris",
  "london": "Europe/London",
  "new york": "America/New_York",
  "tokyo": "Asia/Tokyo",
  "sydney": "Australia/Sydney"
}

const handlers = toolkit.toLayer({
  get_weather: ({ city }) =>
    Effect.delay(
      Effect.succeed({ city, celsius: 12 + (city.length * 7) % 15, sky: ["clear", "partly cloudy", "light rain"][city.length % 3]! }),
      toolLatency
    ),
  get_local_time: ({ city }) =>
    Effect.delay(
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const timeZone = timeZones[city.trim().toLowerCase()]
        return timeZone === undefined
          ? Effect.fail({ reason: `no time zone known for ${city}` })
          : Effect.succeed({
            city,
            time: new Date(now).toLocaleTimeString("en-GB", { timeZone, hour: "2-digit", minute: "2-digit" })
          })
      }),
      toolLatency
    )
})

const agentPrompt =
  "What is the weather in Paris, and what time is it there? Call get_weather({\"city\":\"Paris\"}) and get_local_time({\"city\":\"Paris\"}) together, then answer in one sentence."

const agent: Step = {
  title: "Agent with two tools",
  detail: `Agent.stream, ${models.chat}, get_weather and get_local_time called in parallel`,
  run: () =>
    Effect.gen(function*() {
      yield* prompt(agentPrompt)
      const indented = Output.indenter("  ")
      let textOpen = false
      const closeText = Effect.suspend(() => {
        if (!textOpen) return Effect.void
        textOpen = false
        return Output.write("\n")
      })
      const started = new Map<number, number>()
      const finished = new Map<number, number>()
      const callsPerStep = new Map<number, number>()
      const result = yield* Agent.stream({ model: models.chat, toolkit, messages: [{ role: "user", content: agentPrompt }] }).pipe(
        Stream.runFoldEffect((): Agent.AgentResult | undefined => undefined, (result, event) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            switch (event._tag) {
              case "TextDelta":
                textOpen = true
                yield* Output.write(indented(event.text))
                return result
              case "ToolCallStarted":
                yield* closeText
                if (!started.has(event.step)) started.set(event.step, now)
                callsPerStep.set(event.step, (callsPerStep.get(event.step) ?? 0) + 1)
                yield* say(`${Output.yellow("→")} ${event.name}(${event.arguments})`)
                return result
              case "ToolResult":
                finished.set(event.step, now)
                yield* say(`${Output.green("←")} ${event.result.name}: ${Output.truncate(event.result.content, 70)}`)
                return result
              case "StepFinished": {
                yield* closeText
                const calls = callsPerStep.get(event.step.index) ?? 0
                const begin = started.get(event.step.index)
                const end = finished.get(event.step.index)
                if (calls > 1 && begin !== undefined && end !== undefined) {
                  yield* say(
                    Output.dim(
                      `${calls} calls ran side by side: ${Output.seconds(end - begin)} in all, for tools that take ${
                        Output.seconds(Duration.toMillis(toolLatency))
                      } each`
                    )
                  )
                }
                return result
              }
              case "Finished":
                yield* closeText
                return event.result
            }
          })),
        Effect.provide(handlers)
      )
      if (result !== undefined) {
        const calls = result.steps.reduce((n, step) => n + step.toolResults.length, 0)
        yield* say(Output.dim(`${result.steps.length} model calls, ${calls} tool calls, ${result.usage.total_tokens} tokens`))
      }
    })
}

// ---------------------------------------------------------------------------
// The other steps.
// ---------------------------------------------------------------------------

const listModels: Step = {
  title: "Models",
  detail: "Models.list",
  run: () =>
    Effect.gen(function*() {
      const list = yield* Models.list
      yield* Output.line(ModelsCommand.render(list, "  "))
    })
}

/** `12 prompt + 30 completion = 42 tokens`. */
const tokens = (usage: Protocol.Usage | null | undefined) =>
  usage ? `${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion = ${usage.total_tokens} tokens` : "no usage reported"

const askPrompt = "What is Switchboard, in one sentence?"

const chat: Step = {
  title: "Chat",
  detail: `Chat.create, ${models.chat}: the whole completion at once`,
  run: () =>
    Effect.gen(function*() {
      yield* prompt(askPrompt)
      const completion = yield* Chat.create({ model: models.chat, messages: [{ role: "user", content: askPrompt }] })
      yield* say(completion.choices[0]?.message.content ?? "")
      yield* say(Output.dim(`${completion.choices[0]?.finish_reason ?? "no finish reason"}; ${tokens(completion.usage)}`))
    })
}

const chatPrompt = "In one sentence, welcome a new user to Switchboard."

const chatStreamed: Step = {
  title: "Chat, streamed",
  detail: `Chat.streamWithCompletion, ${models.chat}: the text as it arrives, then the completion`,
  run: () =>
    Effect.gen(function*() {
      yield* prompt(chatPrompt)
      const indented = Output.indenter("  ")
      yield* Chat.streamWithCompletion({ model: models.chat, messages: [{ role: "user", content: chatPrompt }] }).pipe(
        Stream.runForEach((part) =>
          part._tag === "TextDelta"
            ? Output.write(indented(part.text))
            : Output.write(indented(`\n${Output.dim(`${part.completion.choices[0]?.finish_reason}; ${tokens(part.completion.usage)}`)}\n`))
        )
      )
    })
}

const visionPrompt = "What is in this picture?"

const chatWithImage: Step = {
  title: "Chat with an image",
  detail: `Attachment.message with the fox above (NodeAttachment.fromFile), ${models.chat}`,
  run: ({ made, out }) =>
    Effect.gen(function*() {
      yield* prompt(visionPrompt)
      const photo = yield* NodeAttachment.fromFile(made.image ?? `${out}/fox-1.png`)
      const completion = yield* Chat.create({ model: models.chat, messages: [Attachment.message(visionPrompt, photo)] })
      yield* say(completion.choices[0]?.message.content ?? "")
    })
}

const typedErrors: Step = {
  title: "Typed errors",
  detail: "bad input is refused before sending, as an InvalidRequestError naming the field",
  run: () =>
    Effect.gen(function*() {
      yield* prompt("Images.generate({ prompt: \"A fox\", n: 0 })")
      yield* Images.generate({ prompt: "A fox", n: 0 }).pipe(
        Effect.flatMap(() => say("sent?")),
        Effect.catchTag("InvalidRequestError", (error) =>
          say(`${Output.yellow("InvalidRequestError")} (field ${error.field}, nothing sent): ${error.message}`))
      )
    })
}

const imagePrompt = "A red fox in fresh snow, watercolour"
const sketchPrompt = "The same fox as a pencil sketch, wide landscape"

const saved = (paths: ReadonlyArray<string>) =>
  Effect.forEach(paths, (path) => Effect.flatMap(describeFile(path), (what) => say(`Saved ${path} (${what})`)), { discard: true })

const image: Step = {
  title: "Image",
  detail: `Images.generate, ${models.image}, saved with NodeMedia.saveImages`,
  run: ({ made, out }) =>
    Effect.gen(function*() {
      yield* prompt(imagePrompt)
      const paths = yield* ImageCommand.generate({ prompt: imagePrompt, model: models.image, size: "1024x1024", out, prefix: "fox" })
      made.image = paths[0]
      yield* saved(paths)
    })
}

const imageToImage: Step = {
  title: "Image to image",
  detail: `Images.transform, ${models.image}, from the fox above (NodeAttachment.fromFile)`,
  run: ({ made, out }) =>
    Effect.gen(function*() {
      yield* prompt(sketchPrompt)
      const from = made.image ?? `${out}/fox-1.png`
      const attachment = yield* NodeAttachment.fromFile(from)
      yield* say(Output.dim(`sending ${from} as a data URI (${attachment.mediaType ?? "image"}, ${Output.bytes(attachment.byteLength ?? 0)})`))
      yield* saved(
        yield* ImageCommand.generate({ prompt: sketchPrompt, model: models.image, size: "1792x1024", from, out, prefix: "fox-sketch" })
      )
    })
}

const videoPrompt = "A slow pan across a paper boat on a pond at dawn"

const video: Step = {
  title: "Video",
  detail: "Videos.submit, then Videos.poll with a progress bar, then NodeMedia.save",
  run: ({ journal, out, pollInterval, videoModel }) =>
    Effect.gen(function*() {
      yield* prompt(videoPrompt)
      const taskId = yield* Effect.uninterruptible(Videos.submit({ model: videoModel, prompt: videoPrompt }))
      yield* say(`Task ${taskId} submitted to ${videoModel}; it stays in the journal ${journal} until it ends`)
      const result = yield* VideoCommand.follow(
        taskId,
        Videos.poll(taskId, VideoCommand.pollOptions({ interval: pollInterval })),
        { out, target: process.stdout, indent: "  " }
      )
      yield* say(`Video ready at ${result.url}`)
      yield* say(`Saved ${result.path} (${Output.bytes(result.bytes)})`)
    })
}

const embeddingTexts = ["The cat sat on the mat.", "A cat was sitting on a mat.", "Quarterly revenue grew by 4%."]

const embeddings: Step = {
  title: "Embeddings",
  detail: `Embeddings.embedMany, ${models.embedding}, cosine similarity`,
  run: () =>
    Effect.gen(function*() {
      for (const text of embeddingTexts) yield* prompt(text)
      const vectors = yield* Embeddings.embedMany(embeddingTexts, { model: models.embedding })
      yield* Output.line(EmbedCommand.render(embeddingTexts, vectors, "  "))
    })
}

const moderationTexts = ["Have a lovely day!", "I will attack them tonight."]

const moderation: Step = {
  title: "Moderation",
  detail: "Moderations.check",
  run: () =>
    Effect.forEach(moderationTexts, (text) =>
      Effect.gen(function*() {
        yield* prompt(text)
        const result = yield* Moderations.check(text)
        yield* Output.line(ModerateCommand.render(result, 3, "  "))
      }), { discard: true })
}

/**
 * The steps of the demo, in order.
 *
 * @since 0.1.0
 * @category demo
 */
export const steps: ReadonlyArray<Step> = [
  listModels,
  chat,
  chatStreamed,
  agent,
  image,
  chatWithImage,
  imageToImage,
  video,
  embeddings,
  moderation,
  typedErrors
]

/**
 * The header printed before step `index` (from 0).
 *
 * @since 0.1.0
 * @category demo
 */
export const header = (index: number, step: Pick<Step, "title">) => `[${index + 1}/${steps.length}] ${step.title}`

const runSteps = (context: Context, verbose: boolean) =>
  Effect.gen(function*() {
    for (const [index, step] of steps.entries()) {
      const title = header(index, step)
      yield* Output.line(`\n${Output.bold(title)} ${Output.dim(`· ${step.detail}`)}`)
      yield* step.run(context).pipe(
        Effect.catchCause((cause) => {
          const error = Errors.errorOf(cause)
          return Effect.andThen(
            Output.errorLine(`\n${Errors.render(error, verbose).replace(/^(\S+) /, `$1 Demo stopped at ${title}: `)}`),
            Effect.fail(new Errors.Reported({ exitCode: Errors.exitCodeOf(error) }))
          )
        })
      )
    }
  })

/**
 * What `switchboard demo` takes: the connection flags, the video model and
 * where files go.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions extends Pick<Connection.Flags, "baseUrl" | "apiKey" | "apiKeyFile" | "verbose"> {
  /** Where files go; default a new temporary directory. */
  readonly out?: string | undefined
  readonly videoModel: string
}

/**
 * Runs every step against the service (when its base URL and key are both
 * given) or the embedded emulator, then prints a one-line summary. Fails
 * with `Errors.Reported` (already printed) at the first failing step.
 *
 * @since 0.1.0
 * @category demo
 */
export const run = Effect.fn("switchboard.demo.run")(function*(options: RunOptions) {
  const fs = yield* FileSystem.FileSystem
  const found = yield* Connection.lookup(options)
  const out = options.out ?? (yield* fs.makeTempDirectory({ prefix: "switchboard-demo-" }))
  yield* fs.makeDirectory(out, { recursive: true })
  const journal = `${out}/tasks`
  const started = yield* Clock.currentTimeMillis
  yield* Output.line(Output.bold("Switchboard demo: every capability of the SDK, one step after the other."))

  const service = Option.all({ baseUrl: found.baseUrl, apiKey: found.apiKey })
  let against: string
  if (Option.isSome(service)) {
    against = service.value.baseUrl
    yield* Output.line(`Service: ${against}`)
    yield* Output.line(`Files:   ${out}`)
    yield* runSteps({ out, journal, videoModel: options.videoModel, pollInterval: undefined, made: {} }, options.verbose).pipe(
      Effect.provide(Connection.layerFrom(service.value, { journalDirectory: journal }))
    )
  } else {
    against = "the embedded emulator"
    // Half a configuration would otherwise pass unnoticed: say what is missing.
    const given = Option.isSome(found.baseUrl) ? "SWITCHBOARD_BASE_URL" : Option.isSome(found.apiKey) ? "SWITCHBOARD_API_KEY" : undefined
    if (given !== undefined) {
      const missing = given === "SWITCHBOARD_BASE_URL" ? "SWITCHBOARD_API_KEY (or --api-key)" : "SWITCHBOARD_BASE_URL (or --base-url)"
      const ignored = Option.isSome(found.baseUrl) ? ` ${found.baseUrl.value}` : ""
      yield* Output.line(Output.yellow(`No ${missing} is set, so the service${ignored} is not used: the demo runs against the embedded emulator.`))
    }
    yield* Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* Output.line(`Service: the embedded emulator at ${emulator.url}/v1, a local and deterministic stand-in.`)
      yield* Output.line(
        Output.dim("         Set SWITCHBOARD_BASE_URL and SWITCHBOARD_API_KEY to run the same steps against the real service.")
      )
      yield* Output.line(`Files:   ${out}`)
      yield* runSteps({ out, journal, videoModel: models.video, pollInterval: Duration.millis(150), made: {} }, options.verbose).pipe(
        Effect.provide(Connection.layerFrom({ baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) }, { journalDirectory: journal }))
      )
    }).pipe(Effect.provide(Emulator.layer()))
  }
  const elapsed = (yield* Clock.currentTimeMillis) - started
  yield* Output.line(
    `\n${Output.green("✔")} ${Output.bold("Demo finished")}: ${steps.length} steps in ${Output.seconds(elapsed)} against ${against}; files in ${out}`
  )
  yield* Output.line(`Next, a chat page with this agent in your browser: ${Output.bold("pnpm serve")}, then open http://127.0.0.1:3000`)
}, (self, options) => Errors.reported(options.verbose)(self))
