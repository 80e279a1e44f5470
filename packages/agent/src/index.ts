/**
 * @since 0.1.0
 */
export * as Agent from "./Agent.js"
export * as AgentError from "./AgentError.js"
export * as Tool from "./Tool.js"
export * as Toolkit from "./Toolkit.js"
export * as Transcript from "./Transcript.js"
