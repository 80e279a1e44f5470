/**
 * Every module but `HttpClientWire`, which loads `effect/http`'s
 * `HttpClient` (about 40 ms of CPU at start) and is imported as
 * `@switchboard/core/HttpClientWire` by the few programs that use it.
 *
 * @since 0.1.0
 */
export * as Attachment from "./Attachment.js"
export * as Chat from "./Chat.js"
export * as EffectVersion from "./EffectVersion.js"
export * as Embeddings from "./Embeddings.js"
export * as HttpWire from "./HttpWire.js"
export * as Images from "./Images.js"
export * as JsonSchema from "./JsonSchema.js"
export * as Models from "./Models.js"
export * as Moderations from "./Moderations.js"
export * as Pacing from "./Pacing.js"
export * as Protocol from "./Protocol.js"
export * as RequestOptions from "./RequestOptions.js"
export * as ResponseMetadata from "./ResponseMetadata.js"
export * as Retry from "./Retry.js"
export * as Sse from "./Sse.js"
export * as StructuredOutput from "./StructuredOutput.js"
export * as Switchboard from "./Switchboard.js"
export * as SwitchboardConfig from "./SwitchboardConfig.js"
export * as SwitchboardError from "./SwitchboardError.js"
export * as TaskJournal from "./TaskJournal.js"
export * as TaskPoller from "./TaskPoller.js"
export * as Telemetry from "./Telemetry.js"
export * as Transport from "./Transport.js"
export * as Videos from "./Videos.js"
