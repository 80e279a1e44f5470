/**
 * Switchboard as an `@effect/ai` `LanguageModel`: `generateText`,
 * `streamText` and `generateObject` over core's `Chat` (so core's
 * validation, retries, time limits and stream handling all apply), with
 * toolkits, tool choice, image inputs and telemetry.
 *
 * @since 0.1.0
 */
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Model from "@effect/ai/Model"
import type * as Response from "@effect/ai/Response"
import * as Telemetry from "@effect/ai/Telemetry"
import * as Tool from "@effect/ai/Tool"
import * as Chat from "@switchboard/core/Chat"
import type * as Protocol from "@switchboard/core/Protocol"
import * as StructuredOutput from "@switchboard/core/StructuredOutput"
import { InvalidRequestError } from "@switchboard/core/SwitchboardError"
import { defaultMaxResponseBytes } from "@switchboard/core/SwitchboardConfig"
import * as SwitchboardTelemetry from "@switchboard/core/Telemetry"
import { Transport } from "@switchboard/core/Transport"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { Span } from "effect/Tracer"
import { endpoint, toAiError } from "./internal/errors.js"
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
  /** `streamText`: overrides core's first-byte time limit. */
  readonly firstByteTimeout?: Duration.DurationInput | undefined
  /** `streamText`: overrides core's idle time limit. */
  readonly idleTimeout?: Duration.DurationInput | undefined
}

/**
 * Per-call settings, over those given to `make`/`layer`/`model`. Set with
 * `withConfigOverride`.
 *
 * @since 0.1.0
 * @category config
 */
export class Config extends Context.Tag("@switchboard/ai/SwitchboardLanguageModel/Config")<Config, ConfigService>() {}

/**
 * Runs `self` with `overrides` over the current config (per-call
 * temperature, `max_tokens`, structured output mode and the like).
 *
 * @example
 * ```ts
 * LanguageModel.generateText({ prompt }).pipe(
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
  // `oneOf`: `@effect/ai` has already narrowed the tools to those named.
  return choice.mode === "required" ? "required" : "auto"
}

const toolDefinition = (origin: Parts.Origin, tool: Tool.Any): Effect.Effect<Protocol.Tool, AiError.AiError> => {
  if (!Tool.isUserDefined(tool)) {
    const message = `tools: the provider-defined tool ${tool.name} is not supported`
    return Effect.fail(toAiError(origin.site, origin.endpoint)(new InvalidRequestError({ field: "tools", message })))
  }
  // The tool's requirements do not matter for reading its schema.
  const userTool = tool as Parameters<typeof Tool.getJsonSchema>[0]
  const description = Tool.getDescription(userTool)
  return Effect.succeed({
    type: "function",
    function: {
      name: tool.name,
      ...(description === undefined ? {} : { description }),
      parameters: Tool.getJsonSchema(userTool) as unknown as Record<string, unknown>
    }
  })
}

interface Built {
  readonly request: Protocol.ChatRequest
  readonly config: ConfigService
  readonly reading: Parts.Reading
}

/** The chat request of a call: the prompt, tools and tool choice, the config, and structured output. */
const build = (origin: Parts.Origin, options: Options, provider: LanguageModel.ProviderOptions): Effect.Effect<Built, AiError.AiError> =>
  Effect.gen(function*() {
    const config: ConfigService = { ...options.config, ...Option.getOrUndefined(yield* Effect.serviceOption(Config)) }
    const { firstByteTimeout: _f, idleTimeout: _i, structuredOutput, ...fields } = config
    const messages = yield* toMessages(origin.site, provider.prompt)
    const tools = yield* Effect.forEach(provider.tools, (tool) => toolDefinition(origin, tool))
    const base: Protocol.ChatRequest = {
      ...fields,
      model: options.model,
      messages,
      // Without tools, `@effect/ai` says `none`: core rejects a forced choice without tools.
      ...(tools.length > 0 ? { tools, tool_choice: toolChoice(provider.toolChoice) } : {})
    }
    if (provider.responseFormat.type === "text") return { request: base, config, reading: {} }
    const mode = structuredOutput ?? (yield* StructuredOutput.DefaultMode)
    const plan = StructuredOutput.plan(provider.responseFormat.schema as Schema.Schema<unknown>, {
      mode,
      // The forced tool is always `respond`; the JSON schema carries the object's name.
      name: mode === "tool" ? undefined : provider.responseFormat.objectName
    })
    const request = yield* Effect.mapError(StructuredOutput.applyTo(plan, base), toAiError(origin.site, origin.endpoint))
    return { request, config, reading: { structured: { callName: plan.tool?.function.name, wrapped: plan.wrapped } } }
  })

// `@effect/ai`'s span wraps core's `chat {model}` client span, which has
// every attribute of the call. This one gets what identifies the call (as
// `@effect/ai`'s own providers set it, plus the newer `gen_ai.provider.name`)
// and the response, but no token usage: backends that add up
// `gen_ai.usage.*` across spans would count each call twice.
const annotateRequest = (span: Span, request: Protocol.ChatRequest) => {
  span.attribute("gen_ai.provider.name", SwitchboardTelemetry.providerName)
  Telemetry.addGenAIAnnotations(span, {
    system: SwitchboardTelemetry.providerName,
    operation: { name: "chat" },
    request: {
      model: request.model,
      temperature: request.temperature,
      topP: request.top_p,
      maxTokens: request.max_tokens,
      stopSequences: request.stop === undefined ? undefined : typeof request.stop === "string" ? [request.stop] : request.stop
    }
  })
}

const annotateResponse = (
  span: Span,
  meta: { readonly id?: string | undefined; readonly model?: string | undefined },
  finish: Response.FinishPartEncoded | undefined
) =>
  Telemetry.addGenAIAnnotations(span, {
    response: { id: meta.id, model: meta.model, finishReasons: finish === undefined ? undefined : [finish.reason] }
  })

const finishOf = (parts: ReadonlyArray<Response.PartEncoded>) =>
  parts.find((part): part is Response.FinishPartEncoded => part.type === "finish")

/**
 * The `LanguageModel` service for `options.model`, over the `Chat` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<LanguageModel.Service, never, Chat.Chat> =>
  Effect.gen(function*() {
    const chat = yield* Chat.Chat
    const chatEndpoint = yield* endpoint("/chat/completions")
    // `streamText` holds what `Chat.accumulate` would: the reply limit of the config, when there is one.
    const maxCharacters = Option.match(yield* Effect.serviceOption(Transport), {
      onNone: () => defaultMaxResponseBytes,
      onSome: (transport) => transport.config.maxResponseBytes
    })
    return yield* LanguageModel.make({
      generateText: (provider) => {
        const origin = { site: { module, method: "generateText" }, endpoint: chatEndpoint }
        return Effect.gen(function*() {
          const { reading, request } = yield* build(origin, options, provider)
          annotateRequest(provider.span, request)
          const completion = yield* Effect.mapError(chat.create(request), toAiError(origin.site, origin.endpoint))
          const parts = yield* Parts.fromCompletion(origin, completion, reading)
          annotateResponse(provider.span, completion, finishOf(parts))
          return parts
        })
      },
      streamText: (provider) => {
        const origin = { site: { module, method: "streamText" }, endpoint: chatEndpoint }
        return Stream.unwrap(Effect.map(build(origin, options, provider), ({ config, request }) => {
          annotateRequest(provider.span, request)
          const chunks = chat.stream(request, {
            includeUsage: true,
            firstByteTimeout: config.firstByteTimeout,
            idleTimeout: config.idleTimeout
          })
          return Parts.fromChunks(origin, chunks, maxCharacters, (finish, first) => annotateResponse(provider.span, first ?? {}, finish))
            .pipe(Stream.mapError((error) => (AiError.isAiError(error) ? error : toAiError(origin.site, origin.endpoint)(error))))
        }))
      }
    })
  })

/**
 * Provides `LanguageModel.LanguageModel`; needs core's `Chat` (from
 * `NodeSwitchboard.layer`, say).
 *
 * @example
 * ```ts
 * const Gpt = SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
 *   Layer.provide(NodeSwitchboard.layerConfig())
 * )
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<LanguageModel.LanguageModel, never, Chat.Chat> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))

/**
 * The model as an `@effect/ai` `Model` (provider `switchboard`): a layer,
 * usable in an `ExecutionPlan` to fall back across models.
 *
 * @since 0.1.0
 * @category models
 */
export const model = (
  name: string,
  config?: ConfigService
): Model.Model<"switchboard", LanguageModel.LanguageModel, Chat.Chat> =>
  Model.make("switchboard", layer({ model: name, config }))
