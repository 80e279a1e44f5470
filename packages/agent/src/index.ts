/**
 * Tools and toolkits are `effect/ai`'s `Tool` and `Toolkit`: one toolkit
 * serves `LanguageModel.generateText` and `Agent.run` alike.
 *
 * @since 0.1.0
 */
export * as Agent from "./Agent.js"
export * as AgentError from "./AgentError.js"
export * as Transcript from "./Transcript.js"
export * as McpTools from "./McpTools.js"
export * as UiMessage from "./UiMessage.js"
export * as UiServer from "./UiServer.js"
export * as UiStream from "./UiStream.js"
