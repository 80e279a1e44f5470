/**
 * Effect Schemas → the JSON Schema the service reads. Effect's
 * `Schema.toJsonSchemaDocument` writes the document (of the schema's JSON
 * form: an optional field may be `null`, decoded by `Schema.toCodecJson`);
 * here its definitions are inlined so that models which ignore `$ref` still
 * see every field, and plain `anyOf`s collapsed so that every property has
 * a `type`. Used for tool parameters (spec 2.3) and for structured output.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Any JSON value.
 *
 * @since 0.1.0
 * @category models
 */
export type Json = string | number | boolean | null | ReadonlyArray<Json> | JsonObject
/**
 * A JSON object: string keys to JSON values.
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonObject {
  readonly [key: string]: Json
}

const isObject = (json: Json | undefined): json is JsonObject =>
  typeof json === "object" && json !== null && !Array.isArray(json)

const refPrefix = "#/$defs/"

/** Replaces every `$ref` by its definition; a recursive one is kept (it cannot be inlined). */
const inline = (json: Json, defs: JsonObject, visiting: ReadonlySet<string>, kept: Set<string>): Json => {
  if (Array.isArray(json)) return json.map((item: Json) => inline(item, defs, visiting, kept))
  if (!isObject(json)) return json
  const { $ref, ...rest } = json
  const body = Object.fromEntries(
    Object.entries(rest).map(([key, value]) => [key, inline(value, defs, visiting, kept)])
  )
  if (typeof $ref !== "string" || !$ref.startsWith(refPrefix)) return collapse($ref === undefined ? body : json)
  const name = $ref.slice(refPrefix.length)
  const definition = defs[name]
  if (definition === undefined || visiting.has(name)) {
    kept.add(name)
    return json
  }
  const resolved = inline(definition, defs, new Set([...visiting, name]), kept)
  // Siblings of the `$ref` (a field's own description) win over the definition's.
  return isObject(resolved) ? collapse({ ...resolved, ...body }) : resolved
}

const simpleKeys = new Set(["type", "enum"])

/**
 * `anyOf` of plain typed branches (a mixed literal union, a nullable field)
 * → one node with `type` (and `enum`), so that every property has a `type`.
 */
const nonFinite = new Set<Json>(["Infinity", "-Infinity", "NaN"])

/**
 * Effect's JSON form of `Schema.Number` also takes `"NaN"` and the
 * infinities as strings: no model should answer a number so.
 */
const withoutNonFinite = (branches: ReadonlyArray<Json>): ReadonlyArray<Json> =>
  branches.some((b) => isObject(b) && (b["type"] === "number" || b["type"] === "integer")) ?
    branches.filter((b) =>
      !(isObject(b) && b["type"] === "string" && Array.isArray(b["enum"]) && b["enum"].every((v: Json) => nonFinite.has(v)))
    ) :
    branches

const collapse = (node: JsonObject): JsonObject => {
  const anyOf = node["anyOf"]
  if (!Array.isArray(anyOf)) return node
  const branches = withoutNonFinite(anyOf)
  if (branches.length === 1 && isObject(branches[0])) {
    const { anyOf: _, ...rest } = node
    return { ...branches[0], ...rest }
  }
  const simple = branches.every(
    (b: Json) => isObject(b) && typeof b["type"] === "string" && Object.keys(b).every((k) => simpleKeys.has(k))
  )
  if (!simple) return node
  const typed = branches as ReadonlyArray<JsonObject>
  const types = [...new Set(typed.map((b) => b["type"] as string))]
  const enumerable = typed.some((b) => b["enum"] !== undefined) &&
    typed.every((b) => b["enum"] !== undefined || b["type"] === "null")
  const { anyOf: _, ...rest } = node
  return {
    type: types.length === 1 ? types[0]! : types,
    ...(enumerable ? { enum: typed.flatMap((b) => (Array.isArray(b["enum"]) ? b["enum"] : [null])) } : {}),
    ...rest
  }
}

/**
 * The JSON Schema of `schema` with its `$defs` inlined; a recursive
 * definition is kept under `$defs`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (schema: Schema.Top): JsonObject => {
  // "error": objects closed (`additionalProperties: false`), as the 3 line's `JSONSchema.make` made them.
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const root = document.schema as JsonObject
  const defs = document.definitions as JsonObject
  const kept = new Set<string>()
  const inlined = inline(root, defs, new Set(), kept)
  const object = isObject(inlined) ? inlined : {}
  return kept.size > 0 ? { ...object, $defs: keptDefs(kept, defs) } : object
}

const keptDefs = (kept: ReadonlySet<string>, defs: JsonObject): JsonObject =>
  Object.fromEntries([...kept].map((name) => [name, defs[name]!]))

/**
 * Whether a JSON Schema describes an object with properties: what tool
 * parameters and strict structured output require at the root.
 *
 * @since 0.1.0
 * @category guards
 */
export const isObjectSchema = (json: JsonObject): boolean => json["type"] === "object" && isObject(json["properties"])

/**
 * The `function.parameters` of a tool: an object with `properties` (each
 * with `type` and `description`), `required` and
 * `additionalProperties: false`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolParameters = (schema: Schema.Top): Record<string, Json> => {
  const { $defs, ...object } = make(schema)
  const properties = isObject(object["properties"]) ? object["properties"] : {}
  return {
    type: "object",
    // A field without a `description` annotation is described by its name:
    // the spec wants every property to carry one.
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, property]) => [
        name,
        isObject(property) && property["description"] === undefined ? { ...property, description: name } : property
      ])
    ),
    required: Array.isArray(object["required"]) ? object["required"] : [],
    additionalProperties: false,
    ...(isObject($defs) ? { $defs } : {})
  }
}
