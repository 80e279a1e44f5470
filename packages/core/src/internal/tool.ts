/**
 * An `effect/ai` tool as a chat-completions tool: the one conversion that
 * `@switchboard/agent` and `@switchboard/ai` both use, so that one tool is
 * sent the same, and refused for the same reasons, whichever runs it.
 * Importable by the other Switchboard packages
 * (`@switchboard/core/internal/tool`), not part of the public API.
 *
 * The rules:
 * - the definition is what the service contract takes (`Protocol.Tool`): a
 *   name of 1-64 letters, digits, `_` or `-`, parameters a JSON Schema of
 *   `type: "object"`; a provider-defined tool (the service runs none), two
 *   tools of one name, or a tool filed under another name than its own is
 *   refused;
 * - parameters are `effect/ai`'s `Tool.getJsonSchema(tool)`;
 * - a tool is strict when its `Tool.Strict` annotation says so, else when the
 *   caller's default does (`false` unless configured): then its parameters
 *   go through `toCodecOpenAI` (every property required, optionals as
 *   nullables, no others) and the model's `null`s read back as absent. A
 *   strict tool needs an Effect `Schema` for its parameters: a JSON Schema
 *   (an MCP tool's) cannot be made strict and is refused.
 */
import { toCodecOpenAI } from "effect/ai/OpenAiStructuredOutput"
import * as Tool from "effect/ai/Tool"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaParser from "effect/SchemaParser"
import * as Protocol from "../Protocol.js"

type Codec = Schema.Codec<unknown, unknown, unknown, unknown>

/** What a tool becomes. */
export interface ChatTool {
  readonly tool: Tool.Any
  /** The entry of a request's `tools`. */
  readonly definition: Protocol.Tool
  readonly strict: boolean
  /**
   * Reads the model's arguments (parsed JSON) into the parameters' type: the
   * parameters schema, or for a strict tool its `toCodecOpenAI` codec.
   */
  readonly decoder: Codec
  /**
   * For a strict tool, the model's arguments as the parameters schema
   * encodes them (nulls for optionals read back as absent), for a caller
   * that decodes them again (`effect/ai`'s toolkit); `undefined` when they
   * are that already.
   */
  readonly toEncoded: ((value: unknown) => Result.Result<unknown, string>) | undefined
}

/**
 * Why a tool cannot be sent: `schema` for parameters that have no usable
 * JSON Schema, `tool` for anything else.
 */
export interface ToolProblem {
  readonly tool: string
  readonly kind: "tool" | "schema"
  readonly message: string
}

/**
 * A strict schema's reader: the model's value (nullables for optionals) →
 * the value → the schema's own encoding. Also what structured output uses.
 */
export const strictReader = (schema: Codec) => {
  const { codec, jsonSchema } = toCodecOpenAI(schema)
  const decode = Schema.decodeUnknownResult(codec as Schema.Codec<unknown, unknown, never, never>)
  const encode = Schema.encodeResult(schema as Schema.Codec<unknown, unknown, never, never>)
  const read = (value: unknown): Result.Result<unknown, string> =>
    Result.mapError(Result.flatMap(decode(value), (decoded) => encode(decoded)), (error) => error.message)
  return { codec: codec as Codec, jsonSchema: jsonSchema as Record<string, unknown>, read }
}

const isDefinition = SchemaParser.is(Protocol.Tool)

const problem = (tool: string, kind: ToolProblem["kind"], message: string) => Result.fail<ToolProblem>({ tool, kind, message })

const make = (tool: Tool.Any, strict: boolean): Result.Result<ChatTool, ToolProblem> => {
  const name = tool.name
  if (Tool.isProviderDefined(tool)) return problem(name, "tool", `the provider-defined tool ${name} is not supported`)
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    return problem(name, "tool", `tool name "${name}" must be 1-64 letters, digits, _ or -`)
  }
  const schema = tool.parametersSchema as Codec
  if (strict && Tool.isDynamic(tool) && tool.jsonSchema !== undefined) {
    return problem(name, "schema", `${name} cannot be strict: its parameters are a JSON Schema, not an Effect Schema`)
  }
  let read: { readonly codec: Codec; readonly jsonSchema: unknown; readonly read?: ChatTool["toEncoded"] }
  try {
    read = strict ? strictReader(schema) : { codec: schema, jsonSchema: Tool.getJsonSchema(tool) }
  } catch (error) {
    // Effect's JSON Schema generation throws for a schema it cannot represent.
    return problem(name, "schema", `the parameters of ${name} have no JSON Schema: ${error instanceof Error ? error.message : String(error)}`)
  }
  const description = Tool.getDescription(tool)
  const definition: Protocol.Tool = {
    type: "function",
    function: {
      name,
      ...(description === undefined ? {} : { description }),
      parameters: read.jsonSchema as Protocol.Tool["function"]["parameters"],
      ...(strict ? { strict } : {})
    }
  }
  if (!isDefinition(definition)) {
    // `Schema.Struct({})` is any value but null; `effect/ai`'s default, `Tool.EmptyParams`, is an empty object.
    return problem(name, "schema", `the parameters of ${name} must be an object schema (a Schema.Struct with fields, or none)`)
  }
  return Result.succeed({ tool, definition, strict, decoder: read.codec, toEncoded: read.read })
}

// A tool never changes (`annotate` and the setters make a new one), so what
// is made from it is made once, for each strictness; a tool dropped drops its entries.
const made = [new WeakMap<Tool.Any, Result.Result<ChatTool, ToolProblem>>(), new WeakMap<Tool.Any, Result.Result<ChatTool, ToolProblem>>()]

/** One tool, strict by its `Tool.Strict` annotation or else by `strictByDefault`. */
export const fromTool = (tool: Tool.Any, strictByDefault: boolean): Result.Result<ChatTool, ToolProblem> => {
  const strict = Tool.getStrictMode(tool) ?? strictByDefault
  const cache = made[strict ? 1 : 0]!
  let found = cache.get(tool)
  if (found === undefined) {
    found = make(tool, strict)
    cache.set(tool, found)
  }
  return found
}

/**
 * A toolkit's tools (a record by name, as `Toolkit.make` files them, or a
 * list), in order. A tool filed under another name than its own, or two of
 * one name, is refused: calls are matched to tools by name.
 */
export const fromTools = (
  tools: Readonly<Record<string, Tool.Any>> | ReadonlyArray<Tool.Any>,
  strictByDefault: boolean
): Result.Result<ReadonlyArray<ChatTool>, ToolProblem> => {
  const entries: ReadonlyArray<readonly [string | undefined, Tool.Any]> = Array.isArray(tools)
    ? tools.map((tool) => [undefined, tool] as const)
    : Object.entries(tools)
  const out: Array<ChatTool> = []
  const seen = new Set<string>()
  for (const [key, tool] of entries) {
    if (key !== undefined && key !== tool.name) return problem(key, "tool", `the tool filed as "${key}" is named "${tool.name}"`)
    if (seen.has(tool.name)) return problem(tool.name, "tool", `two tools are named ${tool.name}`)
    seen.add(tool.name)
    const chat = fromTool(tool, strictByDefault)
    if (Result.isFailure(chat)) return Result.fail(chat.failure)
    out.push(chat.success)
  }
  return Result.succeed(out)
}
