/**
 * Tool-call arguments built from a tool's JSON Schema, so any tool a test
 * offers gets arguments that decode against its own schema.
 *
 * @internal
 */
import * as SchemaValue from "./schemaValue.js"

type JsonSchema = Readonly<Record<string, unknown>>

const fillOf = (parameters: JsonSchema, previous: string | undefined): SchemaValue.Fill =>
  SchemaValue.fill(previous, SchemaValue.asSchema(parameters["$defs"]))

/** Valid arguments for every property of the schema, as a JSON string. */
export const build = (parameters: JsonSchema, previousResult: string | undefined): string =>
  JSON.stringify(SchemaValue.objectFor(parameters, fillOf(parameters, previousResult)))

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
