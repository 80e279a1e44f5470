/**
 * A value decoded by a `Schema` from a chat call (`Chat.createObject`). Two
 * ways to ask the model for it:
 *
 * - `tool` (the default): a forced call of a `respond` tool whose parameters
 *   are the schema. Tool calling is in the service contract (spec 2.3), so
 *   this works on every chat model.
 * - `json_schema`: `response_format: {type: "json_schema"}`. The contract does
 *   not promise it; use it where the service is known to accept it.
 *
 * A schema whose JSON Schema is not an object with properties (an array, a
 * string, a union) is wrapped as `{"value": …}`: tool parameters and strict
 * JSON output both need an object at the root.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import type * as Chat from "./Chat.js"
import * as Json from "./internal/json.js"
import { truncate } from "./internal/text.js"
import * as JsonSchema from "./JsonSchema.js"
import type * as Protocol from "./Protocol.js"
import * as Issue from "./internal/issue.js"
import { InvalidRequestError, type RequestError } from "./SwitchboardError.js"
import { Transport } from "./Transport.js"

/**
 * How the model is asked for the value.
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "tool" | "json_schema"

/**
 * The mode used when a call gives none: `tool` unless a layer says otherwise,
 * e.g. `Layer.succeed(StructuredOutput.DefaultMode, "json_schema")` for a
 * service that accepts `response_format`.
 *
 * @since 0.1.0
 * @category references
 */
export const DefaultMode: Context.Reference<Mode> = Context.Reference<Mode>("@switchboard/core/StructuredOutput/DefaultMode", {
  defaultValue: () => "tool"
})

/**
 * How a value is asked for: the mode (a tool call or a JSON schema), its
 * name, description and strictness.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly mode?: Mode | undefined
  /** The tool's or the JSON schema's name. Default `respond`. */
  readonly name?: string | undefined
  /** What the value is, for the model. */
  readonly description?: string | undefined
  /** `json_schema` mode: sent as `json_schema.strict`. */
  readonly strict?: boolean | undefined
}

/**
 * The reply did not give a value of the schema: `text` is what it gave (the
 * content, or the `respond` call's arguments), `issue` why it does not
 * decode.
 *
 * @since 0.1.0
 * @category errors
 */
export class StructuredOutputError extends Schema.TaggedError<StructuredOutputError>()("StructuredOutputError", {
  message: Schema.String,
  mode: Schema.Literals(["tool", "json_schema"]),
  text: Schema.String,
  issue: Schema.String
}) {}

/**
 * A decoded value and the completion it came from (usage, finish reason).
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectResult<A> {
  readonly value: A
  readonly completion: Protocol.ChatCompletion
}

/**
 * What is sent for a schema, and how the reply is read back.
 *
 * @since 0.1.0
 * @category models
 */
export interface Plan<A, R> {
  readonly mode: Mode
  readonly name: string
  /** Whether the value travels as `{"value": …}`. */
  readonly wrapped: boolean
  /** The JSON Schema sent: the tool's parameters, or `response_format.json_schema.schema`. */
  readonly jsonSchema: JsonSchema.JsonObject
  /** The `respond` tool, in `tool` mode. */
  readonly tool: Protocol.Tool | undefined
  /** Decodes the JSON text of a reply into the value. */
  readonly decode: (text: string) => Effect.Effect<A, StructuredOutputError, R>
}

const rootIsObject = (schema: Schema.Top): boolean => JsonSchema.isObjectSchema(JsonSchema.make(schema))

/**
 * The plan for `schema`: wrapped or not, its JSON Schema and its decoder.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plan = <A, I, R>(schema: Schema.Codec<A, I, R>, options: Options & { readonly mode: Mode }): Plan<A, R> => {
  const name = options.name ?? "respond"
  const wrapped = !rootIsObject(schema)
  const sent: Schema.Codec<A, unknown, R> = wrapped
    ? Schema.Struct({ value: schema }).pipe(Schema.decodeTo(
      Schema.toType(schema),
      SchemaTransformation.transform({ decode: ({ value }) => value, encode: (value) => ({ value }) })
    ))
    : schema
  const jsonSchema = options.mode === "tool"
    ? JsonSchema.toolParameters(sent) as JsonSchema.JsonObject
    : JsonSchema.make(sent)
  // The JSON Schema sent is that of the schema's JSON form (an optional
  // field may come as `null`): its JSON codec reads the reply.
  const decodeValue = Schema.decodeUnknownEffect(Schema.toCodecJson(sent))
  // The issue is bounded: a decoder's message quotes the values it rejects.
  const fail = (text: string, issue: string) =>
    new StructuredOutputError({
      message: `the reply does not match the schema: ${truncate(issue)}`,
      mode: options.mode,
      text,
      issue: truncate(issue, 1000)
    })
  return {
    mode: options.mode,
    name,
    wrapped,
    jsonSchema,
    tool: options.mode === "tool"
      ? {
        type: "function",
        function: {
          name,
          description: options.description ?? "Give the answer as the arguments of this call.",
          parameters: jsonSchema
        }
      }
      : undefined,
    // A model's JSON (`Json.parseModel`): no `__proto__` key a decoded
    // record could inherit from, no nesting past the decoder's stack, and a
    // reason that never quotes the text (it may echo the key).
    decode: (text) =>
      Result.match(Json.parseModel(text), {
        onFailure: (why) => Effect.fail(fail(text, `the text is ${why}`)),
        onSuccess: (value) =>
          Effect.mapError(decodeValue(value, { reportInput: true }), (error) => fail(text, Issue.describe(error.issue, "value")))
      })
  }
}

/**
 * The request with the plan applied: the `respond` tool forced (the
 * request's own tools are kept, as context), or the `response_format`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const applyTo = <A, R>(
  plan: Plan<A, R>,
  request: Protocol.ChatRequest
): Result.Result<Protocol.ChatRequest, InvalidRequestError> => {
  if (plan.tool === undefined) {
    return Result.succeed({
      ...request,
      response_format: {
        type: "json_schema",
        json_schema: { name: plan.name, schema: plan.jsonSchema }
      }
    })
  }
  if (request.tools?.some((tool) => tool.function.name === plan.name)) {
    return Result.fail(
      new InvalidRequestError({ field: "tools", message: `tools must not have a tool named "${plan.name}": structured output uses it` })
    )
  }
  return Result.succeed({
    ...request,
    tools: [...(request.tools ?? []), plan.tool],
    tool_choice: { type: "function", function: { name: plan.name } }
  })
}

/**
 * The JSON text of the value in a reply: the arguments of the `respond`
 * call, or the content.
 *
 * @since 0.1.0
 * @category combinators
 */
export const textOf = <A, R>(plan: Plan<A, R>, message: Protocol.AssistantMessage): string | undefined =>
  plan.tool === undefined
    ? message.content ?? undefined
    : message.tool_calls?.find((call) => call.function.name === plan.name)?.function.arguments

/**
 * Sends `request` asking for a value of `schema` and decodes it. Fails with
 * `StructuredOutputError` when the reply has no value or one that does not
 * decode; the request is validated first, like `Chat.create`'s.
 *
 * @since 0.1.0
 * @category constructors
 */
export const create = <A, I, R>(
  chat: Chat.Service,
  request: Protocol.ChatRequest,
  schema: Schema.Codec<A, I, R>,
  options: Options = {}
): Effect.Effect<ObjectResult<A>, RequestError | StructuredOutputError, R> =>
  Effect.gen(function*() {
    const mode = options.mode ?? (yield* DefaultMode)
    const planned = plan(schema, { ...options, mode })
    const completion = yield* chat.create(yield* Effect.fromResult(applyTo(planned, request)))
    const message = completion.choices[0]?.message
    const text = message === undefined ? undefined : textOf(planned, message)
    if (text === undefined) {
      const issue = mode === "tool" ? `the reply has no ${planned.name} call` : "the reply has no content"
      return yield* shown(new StructuredOutputError({ message: issue, mode, text: message?.content ?? "", issue }))
    }
    return { value: yield* Effect.catch(planned.decode(text), shown), completion }
  })

/** Most characters of the reply's text an error keeps. */
const maxTextKept = 4000

/**
 * Fails with `error` as it is shown: the model's text is the service's, so
 * it is redacted by the `Transport` in context (a key it echoes) and its
 * first 4,000 characters kept. For a `StructuredOutputError` built from a
 * reply outside `create` (an agent's `output`): `Effect.catch(plan.decode(text), shown)`.
 *
 * @since 1.1.0
 * @category errors
 */
export const shown = (error: StructuredOutputError): Effect.Effect<never, StructuredOutputError> =>
  Effect.flatMap(Effect.serviceOption(Transport), (transport) => {
    const redact = Option.match(transport, { onNone: () => (text: string) => text, onSome: (t) => t.redact })
    return Effect.fail(
      new StructuredOutputError({
        message: redact(error.message),
        mode: error.mode,
        text: truncate(redact(error.text), maxTextKept),
        issue: redact(error.issue)
      })
    )
  })
