/**
 * @since 0.1.0
 */
export * as SwitchboardEmbeddingModel from "./SwitchboardEmbeddingModel.js"
export * as SwitchboardLanguageModel from "./SwitchboardLanguageModel.js"
