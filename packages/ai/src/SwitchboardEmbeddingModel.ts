/**
 * Switchboard as an `@effect/ai` `EmbeddingModel`, over core's
 * `Embeddings.embedMany` (batched, in input order).
 *
 * @since 0.1.0
 */
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import * as Model from "@effect/ai/Model"
import * as Embeddings from "@switchboard/core/Embeddings"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { endpoint, toAiError } from "./internal/errors.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly model: string
  readonly dimensions?: number | undefined
  /**
   * Inputs per request; `@effect/ai` batches `embed` calls up to it. Default
   * 128, core's batch size.
   */
  readonly maxBatchSize?: number | undefined
}

const site = { module: "SwitchboardEmbeddingModel", method: "embedMany" }

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<EmbeddingModel.Service, never, Embeddings.Embeddings> =>
  Effect.gen(function*() {
    const embeddings = yield* Embeddings.Embeddings
    const toError = toAiError(site, yield* endpoint("/embeddings"))
    const maxBatchSize = options.maxBatchSize ?? 128
    return yield* EmbeddingModel.make({
      maxBatchSize,
      embedMany: (inputs) =>
        embeddings.embedMany(inputs, { model: options.model, batchSize: maxBatchSize, dimensions: options.dimensions }).pipe(
          Effect.map((vectors) => vectors.map((vector, index) => ({ index, embeddings: [...vector] }))),
          Effect.mapError(toError)
        )
    })
  })

/**
 * Provides `EmbeddingModel.EmbeddingModel`; needs core's `Embeddings`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<EmbeddingModel.EmbeddingModel, never, Embeddings.Embeddings> =>
  Layer.effect(EmbeddingModel.EmbeddingModel, make(options))

/**
 * The embedding model as an `@effect/ai` `Model` (provider `switchboard`).
 *
 * @since 0.1.0
 * @category models
 */
export const model = (
  name: string,
  options: Omit<Options, "model"> = {}
): Model.Model<"switchboard", EmbeddingModel.EmbeddingModel, Embeddings.Embeddings> =>
  Model.make("switchboard", layer({ ...options, model: name }))
