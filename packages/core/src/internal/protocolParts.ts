/**
 * Schema pieces shared by the chat shapes (`Protocol`) and the other
 * endpoints' shapes (`internal/protocolEndpoints`).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** A string that must not be empty, with a message that names the rule. */
export const NonEmptyString = Schema.String.check(Schema.isMinLength(1, { message: "must not be empty" }))

/** A safe integer above 0. */
export const PositiveInt = Schema.Number.check(
  Schema.makeFilter((n) => (Number.isSafeInteger(n) && n > 0) || "must be a positive integer")
)

/**
 * `index` of a reply's list element may be absent: each element then gets
 * its position. `wire` has `index` optional, `typed` requires it; a list
 * whose elements all carry `index` decodes to itself.
 */
export const positioned = <
  W extends Schema.Top & { readonly Type: { readonly index?: number | undefined } },
  T extends Schema.Top & { readonly Type: { readonly index: number } }
>(wire: W, typed: T) =>
  Schema.Array(wire).pipe(Schema.decodeTo(
    Schema.Array(Schema.toType(typed)),
    SchemaTransformation.transform({
      decode: (items) =>
        items.map((item, index) => (item.index === undefined ? { ...item, index } : item)) as unknown as ReadonlyArray<
          T["Type"]
        >,
      encode: (items) => items as unknown as ReadonlyArray<W["Type"]>
    })
  ))

const dropNull = SchemaGetter.transformOptional(Option.filter(Predicate.isNotNull))

/**
 * An optional field of a reply that may also come as `null`, read as absent
 * (services send `"role": null`, `"tool_calls": null`, …; decisions,
 * "Tolerant reading"). The decoded type is that of `Schema.optional`.
 */
export const absentOrNull = <S extends Schema.Top>(schema: S) =>
  Schema.optional(Schema.NullOr(schema)).pipe(Schema.decodeTo(Schema.optional(Schema.toType(schema)), {
    decode: dropNull as never,
    encode: SchemaGetter.passthrough()
  }))

/** `absentOrNull`, with `fallback` when absent or `null`: the decoded field is required. */
export const absentOrNullOr = <S extends Schema.Top>(schema: S, fallback: () => S["Type"]) =>
  Schema.optional(Schema.NullOr(schema)).pipe(Schema.decodeTo(Schema.toType(schema), {
    decode: SchemaGetter.transformOptional((o) =>
      o.pipe(Option.filter(Predicate.isNotNull), Option.orElseSome(fallback))
    ) as never,
    encode: SchemaGetter.passthrough() as never
  }))

/** An optional field with a default when absent (v3's `optionalWith(…, { default })`). */
export const withDefault = <S extends Schema.Top>(schema: S, fallback: () => S["Type"]) =>
  schema.pipe(Schema.withDecodingDefaultType(Effect.sync(fallback)))

/**
 * A token count; one the reply leaves out (or sends as `null`) is 0. A
 * count that cannot be one (negative, or past any number: `1e400` parses as
 * `Infinity`) fails the reply: budgets add these up, and an infinite one
 * would end a run at once, a negative one keep it from ever ending.
 */
export const tokenCount = absentOrNullOr(
  Schema.Number.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0)),
  () => 0
)

/**
 * A reply's object: `fields` decoded, every other key kept as it came
 * (decisions, "Tolerant reading"). Effect 4's decoding drops unknown keys
 * (it has no `onExcessProperty: "preserve"`): the rest signature keeps them.
 */
export const open = <const F extends Schema.Struct.Fields>(fields: F) =>
  Schema.StructWithRest(Schema.Struct(fields), [Schema.Record(Schema.String, Schema.Unknown)])
