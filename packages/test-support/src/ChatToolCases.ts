/**
 * One table of `effect/ai` tools and what the service must be sent for each,
 * or why it is refused before anything is sent: the rule core's
 * `internal/tool` holds for `@switchboard/agent` and `@switchboard/ai` alike.
 * Each package's tests run every case through its own path (`Agent.run`,
 * `LanguageModel.generateText`) against the emulator.
 */
import { toCodecOpenAI } from "effect/ai/OpenAiStructuredOutput"
import * as Tool from "effect/ai/Tool"
import * as Schema from "effect/Schema"

export interface Case {
  readonly name: string
  readonly tool: Tool.Any
  /** The caller's default strictness (`@switchboard/ai`'s `config.strict`; the agent has none: `false`). */
  readonly strictByDefault: boolean
  /** The definition sent, or the kind of refusal: `tool` (name, provider) or `schema` (parameters). */
  readonly outcome:
    | { readonly _tag: "Sent"; readonly definition: unknown }
    | { readonly _tag: "Refused"; readonly kind: "tool" | "schema" }
}

const params = Schema.Struct({
  city: Schema.String.annotate({ description: "City" }),
  note: Schema.optional(Schema.String).annotate({ description: "Free text" })
})

const lookup = Tool.make("lookup", { description: "Looks a city up", parameters: params, success: Schema.String })

const mcpSchema = { type: "object", properties: { key: { type: "string" } }, required: ["key"] }

/** As `McpClient.toolkit` makes an MCP server's tool: a JSON Schema, annotated not strict. */
const mcp = Tool.dynamic("mcp_lookup", { description: "An MCP tool", parameters: mcpSchema, success: Schema.String })

const sent = (tool: Tool.Any, parameters: unknown, strict: boolean): Case["outcome"] => ({
  _tag: "Sent",
  definition: {
    type: "function",
    function: { name: tool.name, description: Tool.getDescription(tool), parameters, ...(strict ? { strict: true } : {}) }
  }
})

const strictSchema = toCodecOpenAI(params).jsonSchema

export const cases: ReadonlyArray<Case> = [
  { name: "a plain tool", tool: lookup, strictByDefault: false, outcome: sent(lookup, Tool.getJsonSchema(lookup), false) },
  {
    name: "a tool annotated Tool.Strict",
    tool: lookup.annotate(Tool.Strict, true),
    strictByDefault: false,
    outcome: sent(lookup, strictSchema, true)
  },
  { name: "strict by the caller's default", tool: lookup, strictByDefault: true, outcome: sent(lookup, strictSchema, true) },
  {
    name: "Tool.Strict false wins over the caller's default",
    tool: lookup.annotate(Tool.Strict, false),
    strictByDefault: true,
    outcome: sent(lookup, Tool.getJsonSchema(lookup), false)
  },
  { name: "a JSON Schema's tool (MCP)", tool: mcp, strictByDefault: false, outcome: sent(mcp, mcpSchema, false) },
  {
    name: "a JSON Schema's tool annotated strict",
    tool: mcp.annotate(Tool.Strict, true),
    strictByDefault: false,
    outcome: { _tag: "Refused", kind: "schema" }
  },
  {
    name: "a name with a space",
    tool: Tool.make("get weather", { description: "Weather", parameters: params }),
    strictByDefault: false,
    outcome: { _tag: "Refused", kind: "tool" }
  },
  {
    name: "a name of 65 characters",
    tool: Tool.make("x".repeat(65), { description: "Long", parameters: params }),
    strictByDefault: false,
    outcome: { _tag: "Refused", kind: "tool" }
  },
  {
    name: "parameters that are no object",
    tool: Tool.make("texty", { description: "Text", parameters: Schema.String }),
    strictByDefault: false,
    outcome: { _tag: "Refused", kind: "schema" }
  }
]
