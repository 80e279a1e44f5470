/**
 * The few generators the property tests need beyond `Arbitrary.schema`:
 * Effect 4's `effect/Arbitrary` replaces fast-check, which the 3 line's
 * tests used for these (`fc.oneof` with weights, `fc.constantFrom`, …).
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Schema from "effect/Schema"

/** An integer from `min` to `max`, both included. */
export const integer = (min: number, max: number): Arbitrary.Arbitrary<number> =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max })))

/** A natural number, as `fc.nat()`: up to 2^31 - 1. */
export const nat = integer(0, 2 ** 31 - 1)

/** Any string of at most `maxLength` characters. */
export const string = (maxLength: number): Arbitrary.Arbitrary<string> =>
  Arbitrary.schema(Schema.String.check(Schema.isMaxLength(maxLength)))

/** Any bytes, at most `maxLength` of them. */
export const bytes = (maxLength: number): Arbitrary.Arbitrary<Uint8Array> =>
  Arbitrary.array(integer(0, 255), { maxLength }).pipe(Arbitrary.map((values) => Uint8Array.from(values)))

/** Any JSON value. */
export const json: Arbitrary.Arbitrary<Schema.Json> = Arbitrary.schema(Schema.Json)

/** One of `values`. */
export const constantFrom = <const A extends ReadonlyArray<unknown>>(...values: A): Arbitrary.Arbitrary<A[number]> =>
  integer(0, values.length - 1).pipe(Arbitrary.map((i) => values[i] as A[number]))

/** One of the arbitraries, each chosen in proportion to its weight (`fc.oneof` with weights). */
export const oneof = <A>(
  ...choices: ReadonlyArray<readonly [weight: number, arbitrary: Arbitrary.Arbitrary<A>]>
): Arbitrary.Arbitrary<A> => {
  const total = choices.reduce((sum, [weight]) => sum + weight, 0)
  return integer(0, total - 1).pipe(Arbitrary.flatMap((n) => {
    for (const [weight, arbitrary] of choices) {
      if (n < weight) return arbitrary
      n -= weight
    }
    return choices[choices.length - 1]![1]
  }))
}

/** An object with any subset of `fields` (`fc.record(…, { requiredKeys: [] })`). */
export const partialRecord = <A extends Record<string, unknown>>(
  fields: { readonly [K in keyof A]: Arbitrary.Arbitrary<A[K]> }
): Arbitrary.Arbitrary<Partial<A>> => {
  const keys = Object.keys(fields) as Array<keyof A & string>
  return Arbitrary.all(keys.map((key) =>
    oneof<Partial<A>>(
      [1, Arbitrary.Constant({})],
      [1, fields[key].pipe(Arbitrary.map((value) => ({ [key]: value }) as Partial<A>))]
    )
  )).pipe(Arbitrary.map((parts) => Object.assign({}, ...parts) as Partial<A>))
}
