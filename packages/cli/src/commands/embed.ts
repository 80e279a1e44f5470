/**
 * `switchboard embed <text>…`: the vector of one text, or the cosine
 * similarities of two or more.
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { Embeddings } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Connection from "../Connection.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/**
 * @since 0.1.0
 * @category defaults
 */
export const defaultModel = "text-embedding-3-small"

/**
 * @since 0.1.0
 * @category models
 */
export interface Pair {
  readonly a: number
  readonly b: number
  readonly similarity: number
}

/**
 * Every pair of vectors with its cosine similarity, most similar first.
 *
 * @since 0.1.0
 * @category similarity
 */
export const pairs = (vectors: ReadonlyArray<ReadonlyArray<number>>): ReadonlyArray<Pair> => {
  const out: Array<Pair> = []
  for (let a = 0; a < vectors.length; a++) {
    for (let b = a + 1; b < vectors.length; b++) out.push({ a, b, similarity: Output.cosine(vectors[a]!, vectors[b]!) })
  }
  return out.sort((x, y) => y.similarity - x.similarity)
}

/** Four decimals; a value too small for them in exponent form, so that it does not read as 0. */
const component = (x: number) => x === 0 ? "0" : Math.abs(x) < 0.00005 ? x.toExponential(2) : x.toFixed(4)

const preview = (vector: ReadonlyArray<number>) => {
  const shown = vector.slice(0, 4).map(component)
  return `[${shown.join(", ")}${vector.length > 4 ? `, … ${vector.length - 4} more` : ""}]`
}

/**
 * The human-readable lines: a vector preview for one text, the similarity
 * of every pair for more.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (texts: ReadonlyArray<string>, vectors: ReadonlyArray<ReadonlyArray<number>>, indent = ""): string => {
  const dims = vectors[0]?.length ?? 0
  const head = `${vectors.length} ${vectors.length === 1 ? "vector" : "vectors"} of ${dims} dimensions`
  if (vectors.length === 1) return `${indent}${head}\n${indent}${preview(vectors[0]!)}`
  const quote = (i: number) => `"${Output.truncate(texts[i] ?? "", 40)}"`
  return [
    `${indent}${head}; cosine similarity, most similar first:`,
    Output.table(pairs(vectors).map((p) => [p.similarity.toFixed(3), quote(p.a), "↔", quote(p.b)]), indent + "  ")
  ].join("\n")
}

/**
 * @since 0.1.0
 * @category programs
 */
export const program = (options: { readonly texts: ReadonlyArray<string>; readonly model: string; readonly json: boolean }) =>
  Effect.flatMap(Embeddings.embedMany(options.texts, { model: options.model }), (vectors) =>
    options.json
      ? Output.line(JSON.stringify(
        {
          model: options.model,
          vectors,
          ...(vectors.length > 1 ? { similarities: pairs(vectors) } : {})
        },
        null,
        2
      ))
      : Output.line(render(options.texts, vectors)))

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "embed",
  {
    texts: Argument.String("text").pipe(Argument.atLeast(1), Argument.withDescription("One or more texts")),
    model: Inputs.text("model").pipe(Inputs.withDefault(defaultModel, "The embedding model")),
    json: Inputs.boolean("json").pipe(Flag.withDescription("Print the vectors (and similarities) as JSON")),
    ...Connection.flags
  },
  (flags) => Connection.run(flags, program(flags))
).pipe(Command.withDescription("Embed texts: one text's vector, or the cosine similarities of several"))
