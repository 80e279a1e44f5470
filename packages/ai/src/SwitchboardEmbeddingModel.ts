/**
 * Switchboard as an `effect/ai` `EmbeddingModel`, over core's
 * `Embeddings.embedMany` (batched, in input order). `effect/ai` gathers
 * concurrent `embed` calls into one `embedMany`.
 *
 * @since 0.1.0
 */
import * as Embeddings from "@switchboard/core/Embeddings"
import { checkCount } from "@switchboard/core/SwitchboardConfig"
import * as EmbeddingModel from "effect/ai/EmbeddingModel"
import * as Model from "effect/ai/Model"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { endpoint, toAiError } from "./internal/errors.js"

/**
 * What `make` and `layer` take: the model name, its dimensions and the batch
 * size.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly model: string
  readonly dimensions?: number | undefined
  /** Inputs per request when core splits a call into batches. Default 128, core's batch size. */
  readonly maxBatchSize?: number | undefined
}

const site = { module: "SwitchboardEmbeddingModel", method: "embedMany" }

/**
 * Builds `effect/ai`'s `EmbeddingModel` over the core's embeddings,
 * splitting large calls into batches.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fnUntraced(function*(options: Options) {
  const embeddings = yield* Embeddings.Embeddings
  const toError = toAiError(site, yield* endpoint("/embeddings"))
  // Checked under its own name (core would call it `batchSize`); a bad one
  // fails each call, as effect/ai's model layers do not fail.
  const batchSize = checkCount("maxBatchSize", options.maxBatchSize ?? 128, 1)
  return yield* EmbeddingModel.make({
    embedMany: ({ inputs }) =>
      Effect.fromResult(batchSize).pipe(
        Effect.flatMap((batchSize) => embeddings.embedMany(inputs, { model: options.model, batchSize, dimensions: options.dimensions })),
        // Usage is on core's `embeddings {model}` span, per request.
        Effect.map((vectors) => ({ results: vectors.map((vector) => [...vector]), usage: { inputTokens: undefined } })),
        Effect.mapError(toError)
      )
  })
}) satisfies (options: Options) => Effect.Effect<EmbeddingModel.EmbeddingModel, never, Embeddings.Embeddings>

/**
 * Provides `EmbeddingModel.EmbeddingModel`; needs core's `Embeddings`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<EmbeddingModel.EmbeddingModel, never, Embeddings.Embeddings> =>
  // Fresh: a layer with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(EmbeddingModel.EmbeddingModel, make(options)))

/**
 * The embedding model as an `effect/ai` `Model` (provider `switchboard`).
 *
 * @since 0.1.0
 * @category models
 */
export const model = (
  name: string,
  options: Omit<Options, "model"> = {}
): Model.Model<"switchboard", EmbeddingModel.EmbeddingModel, Embeddings.Embeddings> =>
  Model.make("switchboard", name, layer({ ...options, model: name }))
