/**
 * Tools and toolkits are `effect/ai`'s `Tool` and `Toolkit`: one toolkit
 * serves `LanguageModel.generateText` and `Agent.run` alike.
 *
 * @since 0.1.0
 */
export * as Agent from "./Agent.js"
/**
 * Why a run stopped without an answer.
 *
 * @since 0.1.0
 */
export * as AgentError from "./AgentError.js"
/**
 * The conversation of a run as a `Schema` value.
 *
 * @since 0.1.0
 */
export * as Transcript from "./Transcript.js"
/**
 * Tools from Model Context Protocol servers, for `Agent.run`,
 * `Agent.stream`, `Agent.resume`, `AgentWorkflow` and
 * `LanguageModel.generateText` alike.
 *
 * @since 1.1.0
 */
export * as McpTools from "./McpTools.js"
export * as UiMessage from "./UiMessage.js"
export * as UiServer from "./UiServer.js"
export * as UiStream from "./UiStream.js"
