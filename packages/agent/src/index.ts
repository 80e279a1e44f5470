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
/**
 * The body `useChat` posts, decoded into chat messages and decisions.
 *
 * @since 1.1.0
 */
export * as UiMessage from "./UiMessage.js"
/**
 * An agent or a chat served to a web page as the AI SDK's UI message
 * stream, with approvals across requests.
 *
 * @since 1.1.0
 */
export * as UiServer from "./UiServer.js"
/**
 * Agent events and chat chunks as the AI SDK's UI message stream parts.
 *
 * @since 1.1.0
 */
export * as UiStream from "./UiStream.js"
