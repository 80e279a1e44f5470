/**
 * Tool-call arguments built from a tool's JSON Schema, so any tool a test
 * offers gets arguments that decode against its own schema.
 *
 * @internal
 */

type JsonSchema = Readonly<Record<string, unknown>>

const asSchema = (value: unknown): JsonSchema =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as JsonSchema : {}

const typeOf = (schema: JsonSchema): string => {
  const type = schema["type"]
  if (typeof type === "string") return type
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === "string" && t !== "null") ?? "null"
  return "string"
}

const valueFor = (name: string, schema: JsonSchema, previous: string | undefined): unknown => {
  if (schema["const"] !== undefined) return schema["const"]
  const options = schema["enum"]
  if (Array.isArray(options) && options.length > 0) return options[0]
  const union = schema["anyOf"] ?? schema["oneOf"]
  if (Array.isArray(union) && union.length > 0) return valueFor(name, asSchema(union[0]), previous)
  switch (typeOf(schema)) {
    case "number":
    case "integer":
      return 42
    case "boolean":
      return true
    case "array":
      return []
    case "object":
      return {}
    case "null":
      return null
    default:
      // A string takes the latest tool result so "call A then B with A's result" chains.
      return previous ?? `sample ${name}`
  }
}

const properties = (parameters: JsonSchema): ReadonlyArray<readonly [string, JsonSchema]> =>
  Object.entries(asSchema(parameters["properties"])).map(([name, schema]) => [name, asSchema(schema)] as const)

/** Valid arguments for every property of the schema, as a JSON string. */
export const build = (parameters: JsonSchema, previousResult: string | undefined): string =>
  JSON.stringify(Object.fromEntries(properties(parameters).map(([name, schema]) => [name, valueFor(name, schema, previousResult)])))

/**
 * Arguments that fail the schema: the first required property left out, or
 * invalid JSON when nothing is required (leaving nothing out would be valid).
 */
export const invalid = (parameters: JsonSchema, previousResult: string | undefined): string => {
  const required = parameters["required"]
  const first = Array.isArray(required) && typeof required[0] === "string" ? required[0] : undefined
  if (first === undefined) return "{"
  const valid = JSON.parse(build(parameters, previousResult)) as Record<string, unknown>
  delete valid[first]
  return JSON.stringify(valid)
}
