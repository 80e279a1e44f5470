/**
 * The service as an MCP server (`switchboard mcp`), on `effect/ai`'s
 * `McpServer`: over stdio, or streamable HTTP behind a bearer token of its
 * own and an origin list. Imported when the command runs: no other command
 * loads `McpServer` or the emulator.
 *
 * Tools and their annotations (read-only: the call creates nothing; none
 * deletes or overwrites anything, so none is destructive):
 * - `list_models`, `moderate`, `embed`, `chat`: read-only;
 * - `generate_image`: creates an image (not read-only); with
 *   `include_bytes`, the image itself as MCP image content too;
 * - `generate_video`: submits a paid task (not read-only), reports progress
 *   notifications while it polls, returns the URL. The task is in a file
 *   journal until its URL is given back: a server restarted finds it and
 *   polls it on; `generate_video` with its `task_id` gives the result.
 *
 * The API key stays in this process: never in a result, an error text, a
 * log line or the output.
 *
 * @since 1.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Chat, Embeddings, Images, Models, Moderations, Protocol, type SwitchboardError, type TaskPoller, Videos } from "@switchboard/core"
import { joinBytes } from "@switchboard/core/internal/bytes"
import * as JsonSchema from "@switchboard/core/JsonSchema"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as McpSchema from "effect/ai/McpSchema"
import * as McpServer from "effect/ai/McpServer"
import * as ByteSize from "effect/ByteSize"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { timingSafeEqual } from "node:crypto"
import * as Http from "node:http"
import * as Connection from "./Connection.js"
import * as Output from "./Output.js"

/**
 * What `switchboard mcp` takes: stdio or HTTP, where to listen, and which
 * origins may call.
 *
 * @since 1.1.0
 * @category models
 */
export interface Options {
  /** Streamable HTTP instead of stdio. */
  readonly http: boolean
  readonly host: string
  readonly port: number
  /** Browser origins allowed over HTTP; a request from another gets 403. */
  readonly allowedOrigins: ReadonlyArray<string>
  /** The bearer token HTTP clients must send (401 without it). */
  readonly token: Redacted.Redacted<string> | undefined
  /** Where video tasks are journaled. */
  readonly journal: string
  /** Between two status polls of a video; default the SDK's. */
  readonly pollInterval?: Duration.Duration | undefined
}

/** The largest image given back as bytes (MCP messages are bounded: effect's client takes 16 MiB). */
const maxImageBytes = 8 * 1024 * 1024

/** The largest request body over HTTP, as effect's client bounds a message: a bigger one is refused before it is all read. */
const maxRequestBytes = ByteSize.mebibytes(16)

const protocols = [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26] as const

const text = (value: string): McpSchema.CallToolResult["content"][number] => ({ type: "text", text: value })

const success = (value: unknown, extra: McpSchema.CallToolResult["content"] = []) =>
  new McpSchema.CallToolResult({ content: [text(typeof value === "string" ? value : JSON.stringify(value)), ...extra] })

const failure = (message: string) => new McpSchema.CallToolResult({ isError: true, content: [text(message)] })

/** What a failure says: the SDK's typed errors carry no key (their messages are checked for it); anything else says nothing. */
const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && "message" in error && typeof error.message === "string"
    ? `${String(error._tag)}: ${error.message}`
    : "internal error"

/** Sends a progress notification, when the client asked for them (it gave a progress token). */
const progress = (value: number, total: number, message: string) =>
  Effect.gen(function*() {
    const request = yield* McpSchema.McpRequestContext
    const meta = request.requestMetadata as { readonly progressToken?: string | number } | undefined
    const token = meta?.progressToken
    if (token === undefined) return
    const server = yield* McpServer.McpServer
    yield* server.notifications["notifications/progress"]({ progressToken: token, progress: value, total, message })
  }).pipe(Effect.ignore)

interface Definition<S extends Schema.Top> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly parameters: S
  readonly readOnly: boolean
  readonly idempotent: boolean
  readonly run: (params: S["Type"]) => Effect.Effect<McpSchema.CallToolResult, unknown, Services | McpSchema.McpRequestContext | McpServer.McpServer>
}

type Services = Connection.Services | Followed

const define = <S extends Schema.Top>(definition: Definition<S>) => definition

const describedString = (description: string) => Schema.String.annotate({ description })
const optionalModel = (fallback: string) => Schema.optional(describedString(`The model (default ${fallback})`))

const ListModels = define({
  name: "list_models",
  title: "List models",
  description: "The models the service offers, by id",
  parameters: Schema.Struct({}),
  readOnly: true,
  idempotent: true,
  run: () => Effect.map(Models.list, (models) => success(models.map((m) => m.id)))
})

const Moderate = define({
  name: "moderate",
  title: "Moderate a text",
  description: "Checks a text against the moderation policy: flagged or not, and the category scores",
  parameters: Schema.Struct({ text: describedString("The text to check"), model: optionalModel("the service's") }),
  readOnly: true,
  idempotent: true,
  run: (p) =>
    Effect.map(Moderations.check(p.text, p.model === undefined ? {} : { model: p.model }), (result) =>
      success({ flagged: result.flagged, categories: result.categories, category_scores: result.category_scores }))
})

const Embed = define({
  name: "embed",
  title: "Embed texts",
  description: "The embedding vector of each text, in order",
  parameters: Schema.Struct({
    texts: Schema.Array(Schema.String).pipe(Schema.check(Schema.isMinLength(1))).annotate({ description: "One or more texts" }),
    model: optionalModel("text-embedding-3-small")
  }),
  readOnly: true,
  idempotent: true,
  run: (p) =>
    Effect.map(Embeddings.embedMany(p.texts, { model: p.model ?? "text-embedding-3-small" }), (vectors) =>
      success({ dimensions: vectors[0]?.length ?? 0, vectors }))
})

const ChatTool = define({
  name: "chat",
  title: "One chat completion",
  description: "Asks a second model: one completion of the prompt (and optional system message), its text returned",
  parameters: Schema.Struct({
    prompt: describedString("The user message"),
    system: Schema.optional(describedString("A system message before it")),
    model: optionalModel("gpt-4o-mini"),
    max_tokens: Schema.optional(Schema.Int.pipe(Schema.check(Schema.isGreaterThan(0))).annotate({ description: "The reply's token limit" }))
  }),
  readOnly: true,
  idempotent: false,
  run: (p) =>
    Effect.map(
      Chat.create({
        model: p.model ?? "gpt-4o-mini",
        messages: [...(p.system === undefined ? [] : [{ role: "system" as const, content: p.system }]), { role: "user", content: p.prompt }],
        ...(p.max_tokens === undefined ? {} : { max_tokens: p.max_tokens })
      }),
      (completion) => success(completion.choices[0]?.message.content ?? "")
    )
})

/** A body's bytes, or `undefined` past `max` bytes: the rest is then never read (the body is cancelled). */
const readAtMost = async (body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array | undefined> => {
  const parts: Array<Uint8Array> = []
  let size = 0
  const reader = body?.getReader()
  while (reader !== undefined) {
    const { done, value } = await reader.read()
    if (done) break
    parts.push(value)
    size += value.length
    if (size > max) {
      await reader.cancel()
      return undefined
    }
  }
  return joinBytes(parts)
}

/** The bytes of an image the service made, bounded while read (the URL is the service's: its body may be endless). */
const download = (url: string) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, { signal })
      if (!response.ok) throw new Error(`the image download got ${response.status}`)
      const bytes = await readAtMost(response.body, maxImageBytes)
      if (bytes === undefined) throw new Error(`the image is larger than ${maxImageBytes} bytes`)
      return { bytes, mimeType: response.headers.get("content-type")?.split(";")[0] ?? "image/png" }
    },
    catch: (cause) => ({ _tag: "DownloadError", message: cause instanceof Error ? cause.message : "the image download failed" })
  })

const GenerateImage = define({
  name: "generate_image",
  title: "Generate an image",
  description: "Makes an image (model image2 by default) and returns its URL; with include_bytes, the image itself too",
  parameters: Schema.Struct({
    prompt: describedString("What to draw"),
    size: Schema.optional(Protocol.ImageSize.annotate({ description: "1024x1024, 1024x1792 or 1792x1024" })),
    model: optionalModel("image2"),
    include_bytes: Schema.optional(Schema.Boolean.annotate({ description: "Also return the image as MCP image content (up to 8 MiB)" }))
  }),
  readOnly: false,
  idempotent: false,
  run: (p) =>
    Effect.gen(function*() {
      const images = yield* Images.generate({ prompt: p.prompt, model: p.model ?? "image2", ...(p.size === undefined ? {} : { size: p.size }) })
      const urls = images.map((image) => image.url)
      if (p.include_bytes !== true) return success({ urls })
      const blocks = yield* Effect.forEach(images, (image) =>
        Effect.map(download(image.url), ({ bytes, mimeType }): McpSchema.CallToolResult["content"][number] => ({
          type: "image",
          data: bytes,
          mimeType: image.mediaType ?? mimeType
        })))
      return success({ urls }, blocks)
    })
})

/** Tasks a restarted server found in its journal, followed in the background, by id. */
class Followed extends Context.Service<Followed, Map<string, Deferred.Deferred<TaskPoller.TaskUpdate, unknown>>>()(
  "@switchboard/cli/McpServe/Followed"
) {}

const updateMessage = (update: TaskPoller.TaskUpdate) =>
  update._tag === "InProgress" ? `task ${update.taskId}: ${update.status}` : `task ${update.taskId}: ${update._tag.toLowerCase()}`

const updateProgress = (update: TaskPoller.TaskUpdate) =>
  update._tag === "InProgress" ? update.progress ?? 0 : 100

/** Follows a task's updates to its end, a notification each, then gives the URL and lets the journal go. */
const finish = <E, R>(taskId: string, updates: Stream.Stream<TaskPoller.TaskUpdate, E, R>) =>
  Effect.gen(function*() {
    const done = yield* Videos.outcome(taskId, Stream.tap(updates, (u) => progress(updateProgress(u), 100, updateMessage(u))))
    yield* Videos.complete(taskId)
    return success({ task_id: taskId, video_url: done.videoUrl })
  })

const generateVideo = (pollInterval: Duration.Duration | undefined) => {
  const poll: TaskPoller.PollOptions<SwitchboardError.SwitchboardError> = pollInterval === undefined ? {} : { schedule: Schedule.spaced(pollInterval) }
  return define({
    name: "generate_video",
    title: "Generate a video",
    description: "Submits a video task (it costs money), reports progress while it polls, and returns the video's URL. " +
      "Give task_id (from a progress message) to collect a task submitted before, e.g. before the server restarted.",
    parameters: Schema.Struct({
      prompt: Schema.optional(describedString("What the video shows (needed unless task_id is given)")),
      model: optionalModel("video-1"),
      task_id: Schema.optional(describedString("A task submitted earlier: follow it instead of submitting"))
    }),
    readOnly: false,
    idempotent: false,
    run: (p) =>
      Effect.gen(function*() {
        if (p.task_id !== undefined) {
          const taskId = p.task_id
          const followed = (yield* Followed).get(taskId)
          if (followed !== undefined) {
            const update = yield* Deferred.await(followed)
            return yield* finish(taskId, Stream.make(update))
          }
          return yield* finish(taskId, Videos.poll(taskId, poll))
        }
        if (p.prompt === undefined || p.prompt.trim() === "") return failure("generate_video needs a prompt (or a task_id)")
        const taskId = yield* Videos.submit({ model: p.model ?? "video-1", prompt: p.prompt })
        yield* progress(0, 100, `task ${taskId}: submitted`)
        return yield* finish(taskId, Videos.poll(taskId, poll))
      })
  })
}

/** The tools, in the order `tools/list` gives them. */
const definitions = (options: Pick<Options, "pollInterval">) =>
  [ListModels, Moderate, Embed, ChatTool, GenerateImage, generateVideo(options.pollInterval)] as unknown as ReadonlyArray<Definition<Schema.Top>>

/**
 * The tools' names, in order.
 *
 * @since 1.1.0
 * @category tools
 */
export const toolNames: ReadonlyArray<string> = definitions({}).map((d) => d.name)

/** Registers every tool, its calls running with `services`. */
const registrations = (options: Options, services: Context.Context<Services>) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    for (const definition of definitions(options)) {
      const decode = Schema.decodeUnknownEffect(definition.parameters as Schema.Codec<unknown, unknown>)
      yield* server.addTool({
        tool: new McpSchema.Tool({
          name: definition.name,
          title: definition.title,
          description: definition.description,
          inputSchema: JsonSchema.toolParameters(definition.parameters) as McpSchema.Tool["inputSchema"],
          annotations: {
            title: definition.title,
            readOnlyHint: definition.readOnly,
            destructiveHint: false,
            idempotentHint: definition.idempotent,
            openWorldHint: true
          }
        }),
        annotations: Context.empty(),
        handle: (payload: unknown) =>
          decode(payload ?? {}).pipe(
            Effect.mapError((error) => new McpSchema.InvalidParams({ message: `invalid arguments for ${definition.name}: ${error.message}` })),
            Effect.flatMap((params) =>
              definition.run(params).pipe(
                Effect.catchCause((cause) => Effect.succeed(failure(describe(Option.getOrUndefined(failOf(cause)))))),
                Effect.updateContext((context: Context.Context<McpSchema.McpRequestContext | McpServer.McpServer>) =>
                  Context.merge(services, context)
                )
              )
            )
          ) as Effect.Effect<McpSchema.CallToolResult, McpSchema.InvalidParams, McpSchema.McpRequestContext>
      })
    }
  }))

const failOf = (cause: import("effect/Cause").Cause<unknown>) => {
  const reason = cause.reasons.find((r) => r._tag === "Fail")
  return reason === undefined || reason._tag !== "Fail" ? Option.none() : Option.some(reason.error)
}

/** Follows, in the background, the tasks an earlier run left in the journal. */
const followJournal = (poll: TaskPoller.PollOptions<SwitchboardError.SwitchboardError>) =>
  Effect.gen(function*() {
    const followed = new Map<string, Deferred.Deferred<TaskPoller.TaskUpdate, unknown>>()
    const resumed = yield* Videos.resumePending(poll).pipe(Effect.orElseSucceed(() => ({ pending: [], busy: [], quarantined: [] })))
    for (const { entry, updates } of resumed.pending) {
      const done = yield* Deferred.make<TaskPoller.TaskUpdate, unknown>()
      followed.set(entry.taskId, done)
      yield* Stream.runLast(updates).pipe(
        Effect.flatMap((last) => Option.isSome(last) ? Deferred.succeed(done, last.value) : Deferred.fail(done, "no update")),
        Effect.catchCause((cause) => Deferred.failCause(done, cause)),
        Effect.forkScoped
      )
    }
    if (resumed.pending.length > 0) {
      yield* Output.errorLine(`Following ${resumed.pending.length} video task(s) from the journal: ${resumed.pending.map((p) => p.entry.taskId).join(", ")}`)
    }
    if (resumed.busy.length > 0) {
      yield* Output.errorLine(`Left to the process following them: ${resumed.busy.map((e) => e.taskId).join(", ")}`)
    }
    return followed
  })

const stdinEnded = Effect.callback<void>((resume) => {
  const done = () => resume(Effect.void)
  process.stdin.once("end", done)
  process.stdin.once("close", done)
  return Effect.sync(() => {
    process.stdin.off("end", done)
    process.stdin.off("close", done)
  })
})

/** The bearer check and the origin check of every HTTP request, and its body's bound. */
const guard = (options: Options) =>
  HttpRouter.middleware((effect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const origin = request.headers["origin"]
      if (origin !== undefined && !options.allowedOrigins.includes(origin)) {
        return HttpServerResponse.text("origin not allowed", { status: 403 })
      }
      const expected = options.token === undefined ? undefined : Buffer.from(`Bearer ${Redacted.value(options.token)}`)
      const given = Buffer.from(request.headers["authorization"] ?? "")
      if (expected !== undefined && (given.length !== expected.length || !timingSafeEqual(given, expected))) {
        return HttpServerResponse.text("a bearer token is required", { status: 401, headers: { "www-authenticate": "Bearer" } })
      }
      return yield* Effect.provideService(effect, HttpIncomingMessage.MaxBodySize, maxRequestBytes)
    }), { global: true })

/**
 * The MCP server on `service` (the SDK's services for the real service or
 * the emulator), until interrupted.
 *
 * @since 1.1.0
 * @category programs
 */
export const serve = <E>(options: Options, service: Layer.Layer<Connection.Services, E>) =>
  Effect.gen(function*() {
    const sdk = yield* Layer.build(service)
    const poll: TaskPoller.PollOptions<SwitchboardError.SwitchboardError> = options.pollInterval === undefined ? {} : { schedule: Schedule.spaced(options.pollInterval) }
    const followed = yield* Effect.provideContext(followJournal(poll), sdk)
    const services = Context.add(sdk, Followed, followed) as Context.Context<Services>
    const info = { name: "switchboard", version: "1.1.0", protocols, registrations: registrations(options, services) }
    if (!options.http) {
      yield* Output.errorLine("Switchboard MCP server on stdio")
      // A client ends a stdio server by closing its stdin (MCP lifecycle): stop then, tasks left in the journal.
      return yield* Effect.raceFirst(Layer.launch(McpServer.layerStdio(info)), stdinEnded)
    }
    const app = Layer.merge(
      McpServer.layerHttp({ ...info, path: "/mcp", allowedOrigins: options.allowedOrigins, allowSessionTermination: true }),
      guard(options)
    )
    const server = HttpRouter.serve(app, { disableListenLog: true, disableLogger: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(Http.createServer, { port: options.port, host: options.host }))
    )
    return yield* HttpServer.addressFormattedWith((address) =>
      Effect.andThen(Output.errorLine(`Switchboard MCP server on ${address}/mcp`), Effect.never)
    ).pipe(Effect.provide(server))
  }).pipe(Effect.scoped, Output.logsToStderr)
