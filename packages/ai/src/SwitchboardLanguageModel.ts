/**
 * Switchboard as an `effect/ai` `LanguageModel`: `generateText`,
 * `streamText` and `generateObject` over core's `Chat` (so core's
 * validation, retries, time limits and stream handling all apply), with
 * toolkits (strict or not, approvals), tool choice, image inputs and GenAI
 * telemetry.
 *
 * @since 0.1.0
 */
import * as Chat from "@switchboard/core/Chat"
import { truncate } from "@switchboard/core/internal/text"
import * as ChatTool from "@switchboard/core/internal/tool"
import type * as Protocol from "@switchboard/core/Protocol"
import * as RequestOptions from "@switchboard/core/RequestOptions"
import type * as ResponseMetadata from "@switchboard/core/ResponseMetadata"
import * as StructuredOutput from "@switchboard/core/StructuredOutput"
import { defaultMaxResponseBytes } from "@switchboard/core/SwitchboardConfig"
import * as SwitchboardTelemetry from "@switchboard/core/Telemetry"
import { Transport } from "@switchboard/core/Transport"
import * as AiError from "effect/ai/AiError"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Model from "effect/ai/Model"
import type * as Response from "effect/ai/Response"
import * as Telemetry from "effect/ai/Telemetry"
import * as Tool from "effect/ai/Tool"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { Span } from "effect/Tracer"
import { endpoint, invalidRequest, type Site, toAiError } from "./internal/errors.js"
import { toMessages } from "./internal/prompt.js"
import * as Parts from "./internal/response.js"

/**
 * The request fields a config may set: everything of a `ChatRequest` the
 * provider does not fill from the prompt, the toolkit or the schema.
 *
 * @since 0.1.0
 * @category config
 */
export type RequestFields = Partial<
  Omit<Protocol.ChatRequest, "model" | "messages" | "tools" | "tool_choice" | "response_format" | "stream" | "stream_options">
>

/**
 * Request fields every call of the language model sends (temperature, max
 * tokens …), and how `generateObject` asks for a value.
 *
 * @since 0.1.0
 * @category config
 */
export interface ConfigService extends RequestFields {
  /**
   * How `generateObject` asks for the value: `tool` (a forced call of a
   * `respond` tool, which the service contract supports) or `json_schema`
   * (`response_format`, for a service known to accept it). Default: core's
   * `StructuredOutput.DefaultMode`, which is `tool`.
   */
  readonly structuredOutput?: StructuredOutput.Mode | undefined
  /**
   * Strict schemas (`strict: true`) for function tools and `generateObject`,
   * for a service known to honour them: every property required, optional
   * ones as nullable, no additional properties (`toCodecOpenAI`), and the
   * model's `null`s read back as absent before decoding. A tool's own
   * `Tool.Strict` annotation wins. Default `false`: the service contract
   * does not promise strict mode.
   */
  readonly strict?: boolean | undefined
  /** `streamText`: overrides core's first-byte time limit. */
  readonly firstByteTimeout?: Duration.Input | undefined
  /** `streamText`: overrides core's idle time limit. */
  readonly idleTimeout?: Duration.Input | undefined
}

/**
 * Per-call settings, over those given to `make`/`layer`/`model`. Set with
 * `withConfigOverride`.
 *
 * @since 0.1.0
 * @category config
 */
export class Config extends Context.Service<Config, ConfigService>()("@switchboard/ai/SwitchboardLanguageModel/Config") {}

/**
 * Runs `self` with `overrides` over the current config (per-call
 * temperature, `max_tokens`, structured output mode and the like).
 *
 * @example
 * ```ts
 * import * as SwitchboardLanguageModel from "@switchboard/ai/SwitchboardLanguageModel"
 * import * as LanguageModel from "effect/ai/LanguageModel"
 *
 * const program = LanguageModel.generateText({ prompt: "Name three primes." }).pipe(
 *   SwitchboardLanguageModel.withConfigOverride({ temperature: 0, max_tokens: 200 })
 * )
 * ```
 * @since 0.1.0
 * @category config
 */
export const withConfigOverride: {
  (overrides: ConfigService): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, Config>>
  <A, E, R>(self: Effect.Effect<A, E, R>, overrides: ConfigService): Effect.Effect<A, E, Exclude<R, Config>>
} = dual(2, <A, E, R>(self: Effect.Effect<A, E, R>, overrides: ConfigService) =>
  Effect.flatMap(
    Effect.serviceOption(Config),
    (config) => Effect.provideService(self, Config, { ...Option.getOrUndefined(config), ...overrides })
  ))

/**
 * What `make` and `layer` take: the model name and the fields every call
 * sends.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly model: string
  readonly config?: ConfigService | undefined
}

const module = "SwitchboardLanguageModel"

const toolChoice = (choice: LanguageModel.ProviderOptions["toolChoice"]): Protocol.ToolChoice => {
  if (typeof choice === "string") return choice
  if ("tool" in choice) return { type: "function", function: { name: choice.tool } }
  // `oneOf`: `effect/ai` has already narrowed the tools to those named.
  return choice.mode === "required" ? "required" : "auto"
}

type Codec = Schema.Codec<unknown, unknown, unknown, unknown>

const unsupportedSchema = (method: string, error: unknown) =>
  AiError.make({
    module,
    method,
    reason: new AiError.UnsupportedSchemaError({ description: error instanceof Error ? error.message : String(error) })
  })

interface Tools {
  readonly tools: Array<Protocol.Tool>
  /** Strict tools' readers, by name. */
  readonly readers: Map<string, (params: unknown) => Result.Result<unknown, string>>
}

/**
 * The request's tools by core's conversion, the one the agent uses: one rule
 * for names and strictness (`Tool.Strict` wins, else the config's `strict`).
 * Parameters it cannot send are an `UnsupportedSchemaError`; anything else it
 * refuses, before anything is sent, an invalid request naming `tools`.
 */
const toolDefinitions = (site: Site, tools: ReadonlyArray<Tool.Any>, strictByDefault: boolean) => {
  const chat = ChatTool.fromTools(tools, strictByDefault)
  if (Result.isFailure(chat)) {
    const { kind, message } = chat.failure
    return Effect.fail(kind === "schema" ? unsupportedSchema(site.method, message) : invalidRequest(site, "tools", message))
  }
  const readers = new Map<string, (params: unknown) => Result.Result<unknown, string>>()
  for (const { definition, toEncoded } of chat.success) {
    if (toEncoded !== undefined) readers.set(definition.function.name, toEncoded)
  }
  return Effect.succeed<Tools>({ tools: chat.success.map((t) => t.definition), readers })
}

interface Built {
  readonly request: Protocol.ChatRequest
  readonly config: ConfigService
  readonly reading: Parts.Reading
}

/** The request with the value's schema sent strict: the `respond` tool's parameters, or `response_format`. */
const strictRequest = (
  request: Protocol.ChatRequest,
  plan: { readonly mode: StructuredOutput.Mode; readonly name: string },
  schema: Record<string, unknown>
): Protocol.ChatRequest =>
  plan.mode === "tool"
    ? {
      ...request,
      tools: (request.tools ?? []).map((tool) =>
        tool.function.name === plan.name ? { ...tool, function: { ...tool.function, parameters: schema, strict: true } } : tool
      )
    }
    : { ...request, response_format: { type: "json_schema", json_schema: { name: plan.name, schema, strict: true } } }

/**
 * Why a value does not decode by `schema`, if it does not: checked before
 * `effect/ai` decodes it, which costs a second decode of each object. A
 * schema that cannot decode synchronously (a service, an async check) is
 * left to `effect/ai`.
 */
const checkBy = (schema: Codec) => {
  const decode = Schema.decodeUnknownResult(schema as Schema.Codec<unknown, unknown, never, never>)
  return (value: unknown): string | undefined => {
    try {
      return Result.match(decode(value), { onFailure: (error) => error.message, onSuccess: () => undefined })
    } catch {
      return undefined
    }
  }
}

/** `generateObject` by core's `StructuredOutput` plan: the `respond` tool or `response_format`, strict when asked. */
const structured = Effect.fnUntraced(function*(
  origin: Parts.Origin,
  base: Protocol.ChatRequest,
  config: ConfigService,
  format: { readonly objectName: string; readonly schema: Schema.Top }
) {
  const mode = config.structuredOutput ?? (yield* StructuredOutput.DefaultMode)
  const plan = StructuredOutput.plan(format.schema as Parameters<typeof StructuredOutput.plan>[0], {
    mode,
    // The forced tool is always `respond`; the JSON schema carries the object's name.
    name: mode === "tool" ? undefined : format.objectName
  })
  const applied = StructuredOutput.applyTo(plan, base)
  if (Result.isFailure(applied)) return yield* toAiError(origin.site, origin.endpoint)(applied.failure)
  const callName = plan.tool?.function.name
  const schema = (plan.wrapped ? Schema.Struct({ value: format.schema as Codec }) : format.schema) as Codec
  if (config.strict !== true) return { request: applied.success, structured: { callName, wrapped: plan.wrapped, check: checkBy(schema) } }
  const reader = yield* Effect.try({ try: () => ChatTool.strictReader(schema), catch: (error) => unsupportedSchema(origin.site.method, error) })
  return {
    request: strictRequest(applied.success, plan, reader.jsonSchema),
    structured: { callName, wrapped: plan.wrapped, read: reader.read }
  }
})

/** The chat request of a call: the prompt, tools and tool choice, the config, and structured output. */
const build = Effect.fnUntraced(function*(origin: Parts.Origin, options: Options, provider: LanguageModel.ProviderOptions) {
  const { site } = origin
  const config: ConfigService = { ...options.config, ...Option.getOrUndefined(yield* Effect.serviceOption(Config)) }
  const { firstByteTimeout: _f, idleTimeout: _i, structuredOutput: _s, strict, ...fields } = config
  const messages = yield* toMessages(site, provider.prompt)
  const { readers, tools } = yield* toolDefinitions(site, provider.tools, strict === true)
  const base: Protocol.ChatRequest = {
    ...fields,
    model: options.model,
    messages,
    // Without tools, `effect/ai` says `none`: core rejects a forced choice without tools.
    ...(tools.length > 0 ? { tools, tool_choice: toolChoice(provider.toolChoice) } : {})
  }
  const params: Parts.Reading["params"] = readers.size === 0
    ? undefined
    : (name, value) => readers.get(name)?.(value) ?? Result.succeed(value)
  if (provider.responseFormat.type === "text") return { request: base, config, reading: { params } } satisfies Built
  const { request, structured: s } = yield* structured(origin, base, config, provider.responseFormat)
  return { request, config, reading: { structured: s, params } } satisfies Built
})

// `effect/ai`'s span wraps core's `chat {model}` client span, which has
// every attribute of the call. This one gets what identifies the call and
// the response, but no token usage: backends that add up `gen_ai.usage.*`
// across spans would count each call twice.
const annotateRequest = (span: Span, request: Protocol.ChatRequest, output: "text" | "json") =>
  Telemetry.addGenAIAnnotations(span, {
    provider: { name: SwitchboardTelemetry.providerName },
    operation: { name: "chat" },
    output: { type: output },
    request: {
      model: request.model,
      temperature: request.temperature,
      topP: request.top_p,
      maxTokens: request.max_tokens,
      seed: request.seed,
      stopSequences: request.stop === undefined || request.stop === null
        ? undefined
        : typeof request.stop === "string"
        ? [request.stop]
        : request.stop
    }
  })

// The id and model are the service's words: redacted (a key it echoes) and bounded, as on core's span.
const annotateResponse = (
  span: Span,
  meta: { readonly id?: string | undefined; readonly model?: string | undefined },
  finish: Response.FinishPartEncoded | undefined,
  redact: (text: string) => string
) =>
  Telemetry.addGenAIAnnotations(span, {
    response: {
      id: meta.id === undefined ? undefined : truncate(redact(meta.id), 1000),
      model: meta.model === undefined ? undefined : truncate(redact(meta.model), 1000),
      finishReasons: finish === undefined ? undefined : [finish.reason]
    }
  })

/**
 * The last reply of a call: `RequestOptions.onResponse` records it, for the
 * finish part.
 */
const replyRecorder = () => {
  let last: ResponseMetadata.ResponseMetadata | undefined
  return {
    get: () => last,
    options: {
      onResponse: (reply: ResponseMetadata.ResponseMetadata) =>
        Effect.sync(() => {
          last = reply
        })
    }
  }
}

// `effect/ai`'s `Toolkit.handle` annotates the current span, the
// `LanguageModel` one, with the tool's name and its arguments (`tool`,
// `parameters`), whatever the content opt-in says. Without the opt-in
// (`Telemetry.CaptureContent`), this span drops them: arguments are content.
const contentAttributes = new Set(["tool", "parameters"])
const withoutContent = (span: Span): void => {
  const attribute = span.attribute.bind(span)
  span.attribute = (key, value) => {
    if (!contentAttributes.has(key)) attribute(key, value)
  }
}

const finishOf = (parts: ReadonlyArray<Response.PartEncoded>) =>
  parts.find((part): part is Response.FinishPartEncoded => part.type === "finish")

/**
 * The `LanguageModel` service for `options.model`, over the `Chat` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fnUntraced(function*(options: Options) {
  const chat = yield* Chat.Chat
  const chatEndpoint = yield* endpoint("/chat/completions")
  // `streamText` holds what `Chat.accumulate` would: the reply limit of the config, when there is one.
  const maxCharacters = Option.match(yield* Effect.serviceOption(Transport), {
    onNone: () => defaultMaxResponseBytes,
    onSome: (transport) => transport.config.maxResponseBytes
  })
  return yield* LanguageModel.make({
    // Chat completions take a system message anywhere in the conversation.
    supportsSystemMessagesInHistory: Effect.succeed(true),
    generateText: Effect.fnUntraced(function*(provider) {
      const method = provider.responseFormat.type === "json" ? "generateObject" : "generateText"
      const origin = { site: { module, method }, endpoint: chatEndpoint }
      const { reading, request } = yield* build(origin, options, provider)
      if (!(yield* SwitchboardTelemetry.CaptureContent)) withoutContent(provider.span)
      annotateRequest(provider.span, request, provider.responseFormat.type)
      const reply = replyRecorder()
      const completion = yield* Effect.mapError(
        RequestOptions.withRequestOptions(chat.create(request), reply.options),
        toAiError(origin.site, origin.endpoint)
      )
      const parts = yield* Effect.fromResult(Parts.fromCompletion(origin, completion, reading, reply.get()))
      annotateResponse(provider.span, completion, finishOf(parts), chatEndpoint.redact)
      return parts
    }),
    streamText: (provider) => {
      const origin = { site: { module, method: "streamText" }, endpoint: chatEndpoint }
      return Stream.unwrap(Effect.map(build(origin, options, provider), ({ config, reading, request }) => {
        annotateRequest(provider.span, request, "text")
        const reply = replyRecorder()
        const chunks = chat.stream(request, {
          includeUsage: true,
          firstByteTimeout: config.firstByteTimeout,
          idleTimeout: config.idleTimeout
        }).pipe(RequestOptions.withRequestOptions(reply.options))
        const onEnd = (finish: Response.FinishPartEncoded, first: Protocol.ChatCompletionChunk | undefined) =>
          annotateResponse(provider.span, first ?? {}, finish, chatEndpoint.redact)
        return Parts.fromChunks(origin, chunks, maxCharacters, reading, onEnd, reply.get)
          .pipe(Stream.mapError((error) => (AiError.isAiError(error) ? error : toAiError(origin.site, origin.endpoint)(error))))
      }))
    }
  })
}) satisfies (options: Options) => Effect.Effect<LanguageModel.LanguageModel, never, Chat.Chat>

/**
 * Provides `LanguageModel.LanguageModel`; needs core's `Chat` (from
 * `NodeSwitchboard.layer`, say).
 *
 * @example
 * ```ts
 * import * as SwitchboardLanguageModel from "@switchboard/ai/SwitchboardLanguageModel"
 * import * as NodeSwitchboard from "@switchboard/node/NodeSwitchboard"
 * import * as Layer from "effect/Layer"
 *
 * const Gpt = SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
 *   Layer.provide(NodeSwitchboard.layerConfig())
 * )
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, Chat.Chat> =>
  // Fresh: a layer with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(LanguageModel.LanguageModel, make(options)))

/**
 * The model as an `effect/ai` `Model` (provider `switchboard`): a layer,
 * usable in an `ExecutionPlan` to fall back across models.
 *
 * @since 0.1.0
 * @category models
 */
export const model = (
  name: string,
  config?: ConfigService
): Model.Model<"switchboard", LanguageModel.LanguageModel, Chat.Chat> =>
  Model.make("switchboard", name, layer({ model: name, config }))
