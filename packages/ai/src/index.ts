/**
 * Switchboard as a provider for Effect 4's `effect/ai`: a `LanguageModel`
 * and an `EmbeddingModel` over the core's chat and embeddings.
 *
 * @since 0.1.0
 */
export * as SwitchboardEmbeddingModel from "./SwitchboardEmbeddingModel.js"
/**
 * Switchboard as an `effect/ai` `LanguageModel`.
 *
 * @since 0.1.0
 */
export * as SwitchboardLanguageModel from "./SwitchboardLanguageModel.js"
