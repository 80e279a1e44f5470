/**
 * A value built from a JSON Schema, deterministically: what the emulator
 * fills tool-call arguments and `response_format` replies with, so that a
 * client decoding them with the schema it sent succeeds, nested objects and
 * arrays included.
 *
 * @internal
 */

type JsonSchema = Readonly<Record<string, unknown>>

export const asSchema = (value: unknown): JsonSchema =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as JsonSchema : {}

const typeOf = (schema: JsonSchema): string => {
  const type = schema["type"]
  if (typeof type === "string") return type
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === "string" && t !== "null") ?? "null"
  if (schema["properties"] !== undefined) return "object"
  if (schema["items"] !== undefined) return "array"
  return "string"
}

/** How to fill a string property; `previous` is the latest tool result, when strings take it. */
export interface Fill {
  readonly previous: string | undefined
  /** `#/$defs/...` targets of the root schema. */
  readonly defs: JsonSchema
  /** What is left to build (`fill`): a schema's `minItems`, `minLength` and branching `$ref`s multiply. */
  readonly budget: { values: number; characters: number }
}

// A recursive `$ref` stops here: deep enough for any real schema, short of a stack overflow.
const maxDepth = 32

/**
 * Most values and string characters one value is built with: far more than
 * any real schema needs, and a bound on what a request can make the emulator
 * build (a `$ref` branching four ways 32 deep, `minItems: 1e9`). Past it,
 * arrays and objects are built empty and strings short, as past `maxDepth`.
 */
const maxValues = 100_000
const maxCharacters = 1024 * 1024

/** A fill with a whole budget, for one value. */
export const fill = (previous: string | undefined, defs: JsonSchema): Fill => ({
  previous,
  defs,
  budget: { values: maxValues, characters: maxCharacters }
})

const number = (schema: JsonSchema, type: string): number => {
  const minimum = schema["minimum"] ?? schema["exclusiveMinimum"]
  const maximum = schema["maximum"] ?? schema["exclusiveMaximum"]
  const value = typeof minimum === "number" && minimum > 42
    ? minimum + (schema["exclusiveMinimum"] !== undefined ? 1 : 0)
    : typeof maximum === "number" && maximum < 42
    ? maximum - (schema["exclusiveMaximum"] !== undefined ? 1 : 0)
    : 42
  return type === "integer" ? Math.ceil(value) : value
}

const string = (name: string, schema: JsonSchema, fill: Fill): string => {
  const text = fill.previous ?? `sample ${name}`
  const min = typeof schema["minLength"] === "number" ? schema["minLength"] : 0
  const max = typeof schema["maxLength"] === "number" ? schema["maxLength"] : Infinity
  const left = fill.budget.characters
  const value = text.padEnd(Math.min(min, left), "x").slice(0, Math.min(max, left))
  fill.budget.characters -= value.length
  return value
}

/** The value for `schema`, named `name` (the property it fills, for strings). */
export const valueFor = (name: string, schema: JsonSchema, fill: Fill, depth = 0): unknown => {
  const over = fill.budget.values-- <= 0
  const ref = schema["$ref"]
  if (typeof ref === "string" && ref.startsWith("#/$defs/") && depth < maxDepth && !over) {
    // Siblings of a `$ref` (a refinement's `maximum`) narrow the definition.
    const { $ref: _, ...siblings } = schema
    return valueFor(name, { ...asSchema(fill.defs[ref.slice("#/$defs/".length)]), ...siblings }, fill, depth + 1)
  }
  if (schema["const"] !== undefined) return schema["const"]
  const options = schema["enum"]
  if (Array.isArray(options) && options.length > 0) return options[0]
  const union = schema["anyOf"] ?? schema["oneOf"]
  if (Array.isArray(union) && union.length > 0 && depth < maxDepth) return valueFor(name, asSchema(union[0]), fill, depth + 1)
  switch (typeOf(schema)) {
    case "number":
    case "integer":
      return number(schema, typeOf(schema))
    case "boolean":
      return true
    case "array": {
      const min = typeof schema["minItems"] === "number" ? schema["minItems"] : 1
      const items = schema["items"]
      // A tuple (`prefixItems`, or `items` as a list) gets one value per position, named
      // as the property: Effect 4 writes a non-empty array as `prefixItems` and `items`.
      const tuple = Array.isArray(schema["prefixItems"]) ? schema["prefixItems"] : Array.isArray(items) ? items : undefined
      if (tuple !== undefined) return tuple.map((item) => valueFor(name, asSchema(item), fill, depth + 1))
      if (items === undefined || depth >= maxDepth || over) return []
      return Array.from({ length: Math.min(min, Math.max(fill.budget.values, 0)) }, () => valueFor(name, asSchema(items), fill, depth + 1))
    }
    case "object":
      return depth >= maxDepth || over ? {} : objectFor(schema, fill, depth + 1)
    case "null":
      return null
    default:
      return string(name, schema, fill)
  }
}

/** A value for every property of an object schema. */
export const objectFor = (schema: JsonSchema, fill: Fill, depth = 0): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(asSchema(schema["properties"])).map(([name, property]) => [name, valueFor(name, asSchema(property), fill, depth)])
  )

/** The value of a root schema, its `$defs` resolved. */
export const build = (schema: JsonSchema, previous?: string): unknown =>
  valueFor("value", schema, fill(previous, asSchema(schema["$defs"] ?? schema["definitions"])))
