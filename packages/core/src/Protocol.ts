/**
 * Wire shapes of the service (spec part 2 and the decisions of
 * `docs/decisions.md`) as `Schema`s. Field names are the wire's names.
 *
 * Request schemas carry the service's rules as filters with messages phrased
 * after the field (`must be one of …`, `is required when …`) so that a request
 * the service would reject fails locally with an error naming the field.
 * Reply schemas are tolerant (`docs/decisions.md`, "Tolerant reading"): they
 * require only what the contract shows or what the SDK cannot work without,
 * fill documented defaults for the rest, and keep unknown fields.
 *
 * @since 0.1.0
 */
import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Json from "./internal/json.js"
import * as Parts from "./internal/protocolParts.js"

const optional = Schema.optional
// Reply fields: absent, or `null` read as absent.
const absentOrNull = Parts.absentOrNull

/**
 * `JSON.parse` for text from the wire or from a model: no `__proto__` key
 * survives, so no later copy of the value can change a prototype. Throws on
 * text that is not JSON.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseJson: (text: string) => unknown = Json.parse

/**
 * A model's JSON (tool arguments, structured output): `parseJson`, and no
 * nesting deeper than `maxModelJsonDepth`. A failure says why in words that
 * never quote the text: a model may echo anything, the API key included.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseModelJson: (text: string) => Result.Result<unknown, string> = Json.parseModel

/**
 * How deep `parseModelJson` lets a value nest: far beyond any tool's
 * parameters, short of any decoder's stack.
 *
 * @since 0.1.0
 * @category parsing
 */
export const maxModelJsonDepth: number = Json.maxModelDepth

/**
 * A string that must not be empty, with a message that names the rule.
 *
 * @since 0.1.0
 * @category primitives
 */
export const NonEmptyString = Parts.NonEmptyString

/**
 * A whole number above zero, as counts and token limits are.
 *
 * @since 0.1.0
 * @category primitives
 */
export const PositiveInt = Parts.PositiveInt

// ---------------------------------------------------------------------------
// Content parts and messages (spec 2.2)
// ---------------------------------------------------------------------------

const dataUriPattern = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]*)$/i

/**
 * An image address: an http(s) URL or a base64 data URI.
 *
 * @since 0.1.0
 * @category content
 */
export const ImageAddress = Schema.String.check(
  Schema.makeFilter(
    (url) =>
      /^https?:\/\/\S+$/i.test(url) || dataUriPattern.test(url) ||
      "must be an http(s) URL or a data URI of the form data:<media type>;base64,<data>",
    // Random strings almost never pass the filter: generate addresses.
    { arbitraryConstraint: { patterns: [{ source: "^(https?://[a-z0-9]+\\.[a-z]{2,}/[a-z0-9]*|data:image/png;base64,[A-Za-z0-9+/]*)$", flags: "" }] } }
  )
)

/**
 * Splits a base64 data URI into its media type and payload, or `undefined`.
 *
 * @since 0.1.0
 * @category content
 */
export const parseDataUri = (uri: string): { readonly mediaType: string; readonly base64: string } | undefined => {
  const match = dataUriPattern.exec(uri)
  return match ? { mediaType: match[1]!.toLowerCase(), base64: match[2]! } : undefined
}

/**
 * A text part of a user message's content.
 *
 * @since 0.1.0
 * @category content
 */
export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
})

/**
 * An image part of a user message's content: its URL or data URI and the
 * detail.
 *
 * @since 0.1.0
 * @category content
 */
export const ImagePart = Schema.Struct({
  type: Schema.Literal("image_url"),
  image_url: Schema.Struct({
    url: ImageAddress,
    detail: optional(Schema.Literals(["auto", "low", "high"]))
  })
})

/**
 * One part of a user message's content: text or an image.
 *
 * @since 0.1.0
 * @category content
 */
export const ContentPart = Schema.Union([TextPart, ImagePart])
/**
 * One part of a user message's content: text or an image.
 *
 * @since 0.1.0
 * @category content
 */
export type ContentPart = typeof ContentPart.Type

// The message names the empty list, where the element-level "is required"
// would point at a part that is not there; for a list with bad parts the
// parts' own messages (and paths) are kept.
const Content = Schema.Union([
  Schema.String,
  Schema.Array(ContentPart).pipe(Schema.refine(
    (parts): parts is readonly [ContentPart, ...Array<ContentPart>] => parts.length > 0,
    { message: "must not be an empty list of parts" }
  ))
]).annotate({ message: "must be a string or a non-empty list of parts" })

/**
 * A tool call the model made: its id, the function's name and its arguments
 * as JSON text.
 *
 * @since 0.1.0
 * @category tools
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  type: Parts.withDefault(Schema.Literal("function"), () => "function" as const),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})
/**
 * A tool call the model made: its id, the function's name and its arguments
 * as JSON text.
 *
 * @since 0.1.0
 * @category tools
 */
export type ToolCall = typeof ToolCall.Type

// One struct per role literal: a union of structs told apart by a single
// literal is searched by it, so a bad field of a system message is reported
// as that field, not as a role mismatch of some other member.
const systemMessage = <Role extends "system" | "developer">(role: Role) =>
  Schema.Struct({
    role: Schema.Literal(role),
    content: Content,
    name: optional(Schema.String)
  })

/**
 * A system (or developer) message: instructions for the model.
 *
 * @since 0.1.0
 * @category messages
 */
export const SystemMessage = Schema.Union([systemMessage("system"), systemMessage("developer")])

/**
 * A user's message: text, or parts of text and images.
 *
 * @since 0.1.0
 * @category messages
 */
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Content,
  name: optional(Schema.String)
})

/**
 * The model's reply, sent back unchanged to continue a conversation.
 *
 * @since 0.1.0
 * @category messages
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: optional(Schema.NullOr(Schema.String)),
  tool_calls: optional(Schema.Array(ToolCall)),
  refusal: optional(Schema.NullOr(Schema.String)),
  name: optional(Schema.String)
})
/**
 * A message from the model: its text, the tools it called or its refusal.
 *
 * @since 0.1.0
 * @category messages
 */
export type AssistantMessage = typeof AssistantMessage.Type

/**
 * The message of a reply: `role` may be absent (the contract shows only
 * `content` and `tool_calls`) and is then `"assistant"`, so the message can
 * be sent back as it is.
 *
 * @since 0.1.0
 * @category messages
 */
export const ReplyMessage = Parts.open({
  ...AssistantMessage.fields,
  role: Parts.absentOrNullOr(Schema.Literal("assistant"), () => "assistant" as const),
  tool_calls: absentOrNull(Schema.Array(Parts.open({
    ...ToolCall.fields,
    type: Parts.absentOrNullOr(Schema.Literal("function"), () => "function" as const)
  }))),
  name: absentOrNull(Schema.String)
})

/**
 * A tool's result, answering one of the model's tool calls by its id.
 *
 * @since 0.1.0
 * @category messages
 */
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  content: Content,
  tool_call_id: NonEmptyString.pipe(Schema.annotateKey({ messageMissingKey: `is required when role is "tool"` }))
})

/**
 * Any message of a conversation: system, user, assistant or tool.
 *
 * @since 0.1.0
 * @category messages
 */
export const Message = Schema.Union([...SystemMessage.members, UserMessage, AssistantMessage, ToolMessage])
/**
 * Any message of a conversation: system, user, assistant or tool.
 *
 * @since 0.1.0
 * @category messages
 */
export type Message = typeof Message.Type
/**
 * A message as JSON sends it (before decoding).
 *
 * @since 0.1.0
 * @category messages
 */
export type MessageEncoded = typeof Message.Encoded

// ---------------------------------------------------------------------------
// Tools (spec 2.3, 2.4)
// ---------------------------------------------------------------------------

const FunctionName = Schema.String.check(
  Schema.makeFilter((name) => /^[A-Za-z0-9_-]{1,64}$/.test(name) || "must be 1-64 letters, digits, _ or -", {
    arbitraryConstraint: { patterns: [{ source: "^[A-Za-z0-9_-]{1,64}$", flags: "" }] }
  })
)

/**
 * A function the model may call: its name, description and JSON Schema of
 * its parameters.
 *
 * @since 0.1.0
 * @category tools
 */
export const Tool = Schema.Struct({
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: FunctionName,
    description: optional(Schema.String),
    parameters: Schema.Record(Schema.String, Schema.Unknown).check(
      Schema.makeFilter((p) => p["type"] === "object" || `must be a JSON Schema with type "object"`)
    ),
    strict: optional(Schema.Boolean)
  })
})
/**
 * A function the model may call: its name, description and JSON Schema of
 * its parameters.
 *
 * @since 0.1.0
 * @category tools
 */
export type Tool = typeof Tool.Type

/**
 * Whether the model may, must or must not call tools, or which one it must
 * call.
 *
 * @since 0.1.0
 * @category tools
 */
export const ToolChoice = Schema.Union([
  Schema.Literals(["auto", "none", "required"]),
  Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) })
])
/**
 * Whether the model may, must or must not call tools, or which one it must
 * call.
 *
 * @since 0.1.0
 * @category tools
 */
export type ToolChoice = typeof ToolChoice.Type

// ---------------------------------------------------------------------------
// Response format (JSON output; not promised by the service contract)
// ---------------------------------------------------------------------------

const JsonSchemaObject = Schema.Record(Schema.String, Schema.Unknown).annotate({
  message: "must be a JSON Schema (an object)"
})

/**
 * `response_format`: plain text, any JSON object, or JSON matching a schema.
 *
 * @since 0.1.0
 * @category chat
 */
export const ResponseFormat = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    json_schema: Schema.Struct({
      name: FunctionName,
      description: optional(Schema.String),
      schema: JsonSchemaObject,
      strict: optional(Schema.Boolean)
    })
  })
]).annotate({
  // A member's own message (a bad `json_schema.name`) is kept when the type matched.
  message: "must be {type: \"text\"}, {type: \"json_object\"} or {type: \"json_schema\", json_schema: {name, schema, strict?}}"
})
/**
 * The form of the reply: text, any JSON object, or JSON that follows a
 * schema.
 *
 * @since 0.1.0
 * @category chat
 */
export type ResponseFormat = typeof ResponseFormat.Type

// ---------------------------------------------------------------------------
// Image options (spec 2.5)
// ---------------------------------------------------------------------------

/**
 * The image sizes the service makes.
 *
 * @since 0.1.0
 * @category images
 */
export const ImageSize = Schema.Literals(["1024x1024", "1024x1792", "1792x1024"]).annotate({
  message: "must be one of 1024x1024, 1024x1792, 1792x1024"
})
/**
 * The image sizes the service makes.
 *
 * @since 0.1.0
 * @category images
 */
export type ImageSize = typeof ImageSize.Type

/**
 * The image qualities the service makes.
 *
 * @since 0.1.0
 * @category images
 */
export const ImageQuality = Schema.Literals(["standard", "hd"]).annotate({ message: "must be one of standard, hd" })

/**
 * The image styles the service makes.
 *
 * @since 0.1.0
 * @category images
 */
export const ImageStyle = Schema.Literals(["vivid", "natural"]).annotate({ message: "must be one of vivid, natural" })

// ---------------------------------------------------------------------------
// Chat request and response (spec 2.1, 2.6)
// ---------------------------------------------------------------------------

const requestRules = (request: {
  readonly messages: ReadonlyArray<Message>
  readonly tools?: ReadonlyArray<Tool> | undefined
  readonly tool_choice?: ToolChoice | undefined
}): Schema.FilterOutput => {
  const called = new Set<string>()
  for (const [i, message] of request.messages.entries()) {
    if (message.role === "assistant") message.tool_calls?.forEach((call) => called.add(call.id))
    if (message.role === "tool" && !called.has(message.tool_call_id)) {
      return {
        path: ["messages", i, "tool_call_id"],
        issue: `must answer a tool call of an earlier assistant message (no call has id "${message.tool_call_id}")`
      }
    }
  }
  const choice = request.tool_choice
  if (choice !== undefined && choice !== "auto" && choice !== "none") {
    if (!request.tools || request.tools.length === 0) {
      return { path: ["tool_choice"], issue: "requires tools to be given" }
    }
    if (typeof choice === "object" && !request.tools.some((tool) => tool.function.name === choice.function.name)) {
      return { path: ["tool_choice", "function", "name"], issue: `must name one of the tools (got "${choice.function.name}")` }
    }
  }
  return true
}

/**
 * The body of `POST /v1/chat/completions`.
 *
 * @since 0.1.0
 * @category chat
 */
export const ChatRequest = Schema.Struct({
  model: NonEmptyString,
  messages: Schema.Array(Message).check(Schema.isMinLength(1, { message: "must not be empty" })),
  max_tokens: optional(PositiveInt),
  /** Today's name for `max_tokens` in the chat-completions format; checked the same way. */
  max_completion_tokens: optional(PositiveInt),
  stream: optional(Schema.Boolean),
  stream_options: optional(Schema.Struct({ include_usage: optional(Schema.Boolean) })),
  tools: optional(Schema.Array(Tool)),
  tool_choice: optional(ToolChoice),
  response_format: optional(ResponseFormat),
  parallel_tool_calls: optional(Schema.Boolean),
  temperature: optional(Schema.Number),
  top_p: optional(Schema.Number),
  stop: optional(Schema.Union([Schema.String, Schema.Array(Schema.String)])),
  seed: optional(Schema.Number),
  user: optional(Schema.String),
  size: optional(ImageSize),
  quality: optional(ImageQuality),
  style: optional(ImageStyle),
  n: optional(PositiveInt)
}).check(Schema.makeFilter(requestRules))
/**
 * A chat completion request: the model, the messages and the sampling, tool
 * and format fields.
 *
 * @since 0.1.0
 * @category chat
 */
export type ChatRequest = typeof ChatRequest.Type

const tokenCount = Parts.tokenCount

/**
 * Token counts; a count the reply leaves out is 0, and one that cannot be a
 * count (negative, or `1e400`, which parses as `Infinity`) fails the reply.
 *
 * @since 0.1.0
 * @category chat
 */
export const Usage = Parts.open({
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  total_tokens: tokenCount
})
/**
 * The tokens a call used: in the prompt, in the completion and in all.
 *
 * @since 0.1.0
 * @category chat
 */
export type Usage = typeof Usage.Type

/**
 * @since 0.1.0
 * @category chat
 */
const choiceFields = {
  message: ReplyMessage,
  finish_reason: Parts.withDefault(Schema.NullOr(Schema.String), () => null)
}

/**
 * One choice of a completion. Required: `message`. `index` defaults to the
 * choice's position, `finish_reason` to `null`.
 *
 * @since 0.1.0
 * @category chat
 */
export const ChatChoice = Parts.open({ index: Schema.Number, ...choiceFields })

/**
 * A chat completion. Required: `id` (a video's task id) and `choices`; the
 * rest is optional (decisions, "Tolerant reading").
 *
 * @since 0.1.0
 * @category chat
 */
export const ChatCompletion = Parts.open({
  id: Schema.String,
  object: absentOrNull(Schema.String),
  created: absentOrNull(Schema.Number),
  model: absentOrNull(Schema.String),
  choices: Parts.positioned(Parts.open({ index: absentOrNull(Schema.Number), ...choiceFields }), ChatChoice),
  usage: optional(Schema.NullOr(Usage))
})
/**
 * A chat completion reply: its id, model, choices and usage.
 *
 * @since 0.1.0
 * @category chat
 */
export type ChatCompletion = typeof ChatCompletion.Type

/**
 * A tool-call fragment inside a stream chunk. `index` is optional because
 * some servers omit it (decision 1).
 *
 * @since 0.1.0
 * @category streaming
 */
export const ToolCallDelta = Parts.open({
  index: absentOrNull(Schema.Number),
  id: absentOrNull(Schema.String),
  type: absentOrNull(Schema.String),
  function: absentOrNull(Parts.open({ name: absentOrNull(Schema.String), arguments: absentOrNull(Schema.String) }))
})
/**
 * A piece of a streamed tool call: its position, and parts of its id, name
 * and arguments.
 *
 * @since 0.1.0
 * @category streaming
 */
export type ToolCallDelta = typeof ToolCallDelta.Type

const chunkChoiceFields = {
  delta: Parts.absentOrNullOr(
    Parts.open({
      role: absentOrNull(Schema.String),
      content: optional(Schema.NullOr(Schema.String)),
      refusal: optional(Schema.NullOr(Schema.String)),
      tool_calls: absentOrNull(Schema.Array(ToolCallDelta))
    }),
    () => ({})
  ),
  finish_reason: optional(Schema.NullOr(Schema.String))
}

/**
 * One choice of a stream chunk. `index` defaults to its position, `delta`
 * to `{}`.
 *
 * @since 0.1.0
 * @category streaming
 */
export const ChunkChoice = Parts.open({ index: Schema.Number, ...chunkChoiceFields })

/**
 * One `data:` event of a streamed chat completion (decision 1). Required:
 * `choices`, the one thing a chunk carries; `id` is optional (the contract
 * shows no chunk format).
 *
 * @since 0.1.0
 * @category streaming
 */
export const ChatCompletionChunk = Parts.open({
  id: absentOrNull(Schema.String),
  object: absentOrNull(Schema.String),
  created: absentOrNull(Schema.Number),
  model: absentOrNull(Schema.String),
  choices: Parts.positioned(Parts.open({ index: absentOrNull(Schema.Number), ...chunkChoiceFields }), ChunkChoice),
  usage: optional(Schema.NullOr(Usage))
})
/**
 * One chunk of a streamed chat completion: the choices' deltas, and usage at
 * the end.
 *
 * @since 0.1.0
 * @category streaming
 */
export type ChatCompletionChunk = typeof ChatCompletionChunk.Type

/**
 * The shapes of the other endpoints: images, videos, embeddings, moderations
 * and models.
 *
 * @since 0.1.0
 */
// The other endpoints' shapes live in their own module so that a bundle which
// only chats (the browser's `layerChat`) leaves them out: `Schema` calls at
// module level are not pure to a bundler, but an unused module of a
// `sideEffects: false` package is dropped whole.
export * from "./internal/protocolEndpoints.js"
