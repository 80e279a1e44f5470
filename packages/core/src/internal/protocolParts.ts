/**
 * Schema pieces shared by the chat shapes (`Protocol`) and the other
 * endpoints' shapes (`internal/protocolEndpoints`).
 */
import * as Schema from "effect/Schema"

/** A string that must not be empty, with a message that names the rule. */
export const NonEmptyString = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" })
)

/** A safe integer above 0. */
export const PositiveInt = Schema.Number.pipe(
  Schema.filter((n) => (Number.isSafeInteger(n) && n > 0) || "must be a positive integer")
)

/**
 * `index` of a reply's list element may be absent: each element then gets
 * its position. `wire` has `index` optional, `typed` requires it; a list
 * whose elements all carry `index` decodes to itself.
 */
export const positioned = <W extends { readonly index?: number | undefined }, WI, T extends { readonly index: number }, TI>(
  wire: Schema.Schema<W, WI>,
  typed: Schema.Schema<T, TI>
) =>
  Schema.transform(Schema.Array(wire), Schema.Array(Schema.typeSchema(typed)), {
    strict: false,
    decode: (items) => items.map((item, index) => (item.index === undefined ? { ...item, index } : item)),
    encode: (items) => items
  })

/** A token count; one the reply leaves out is 0. */
export const tokenCount = Schema.optionalWith(Schema.Number, { default: () => 0 })

/**
 * A field the contract does not show, that a reply may leave out: `null` is
 * read as absent (`docs/decisions.md`), any other value must be of `schema`.
 */
export const optionalOrNull = <A, I, R>(schema: Schema.Schema<A, I, R>) => Schema.optionalWith(schema, { nullable: true })
