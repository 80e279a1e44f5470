/**
 * Every module but `HttpClientWire`, which loads `effect/http`'s
 * `HttpClient` (about 40 ms of CPU at start) and is imported as
 * `@switchboard/core/HttpClientWire` by the few programs that use it.
 *
 * @since 0.1.0
 */
export * as Attachment from "./Attachment.js"
/**
 * Chat completions.
 *
 * @since 0.1.0
 */
export * as Chat from "./Chat.js"
/**
 * Switchboard is built on Effect 4.1 and shares the application's copy of
 * `effect` (a peer dependency).
 *
 * @since 0.1.0
 */
export * as EffectVersion from "./EffectVersion.js"
/**
 * Text embeddings (spec 4.4).
 *
 * @since 0.1.0
 */
export * as Embeddings from "./Embeddings.js"
/**
 * What `Transport` stands on.
 *
 * @since 0.1.0
 */
export * as HttpWire from "./HttpWire.js"
/**
 * Image generation through chat with the model `image2` (spec 2.5, 4.1 use
 * 3).
 *
 * @since 0.1.0
 */
export * as Images from "./Images.js"
/**
 * Effect Schemas → the JSON Schema the service reads.
 *
 * @since 0.1.0
 */
export * as JsonSchema from "./JsonSchema.js"
/**
 * The models the service offers (spec 4.2, decision 5).
 *
 * @since 0.1.0
 */
export * as Models from "./Models.js"
/**
 * Text moderation (spec 4.5).
 *
 * @since 0.1.0
 */
export * as Moderations from "./Moderations.js"
/**
 * Pacing from the rate limits (opt-in).
 *
 * @since 1.1.0
 */
export * as Pacing from "./Pacing.js"
/**
 * Wire shapes of the service (spec part 2 and the decisions of
 * `docs/decisions.md`) as `Schema`s.
 *
 * @since 0.1.0
 */
export * as Protocol from "./Protocol.js"
/**
 * Per-call options without changing any signature.
 *
 * @since 0.1.0
 */
export * as RequestOptions from "./RequestOptions.js"
/**
 * What a reply says besides its body.
 *
 * @since 1.1.0
 */
export * as ResponseMetadata from "./ResponseMetadata.js"
/**
 * The one rule for repeating a failed attempt, and the wait between attempts
 * (decision 6, `docs/errors-and-retries.md`).
 *
 * @since 0.1.0
 */
export * as Retry from "./Retry.js"
/**
 * Server-sent events.
 *
 * @since 0.1.0
 */
export * as Sse from "./Sse.js"
/**
 * A value decoded by a `Schema` from a chat call (`Chat.createObject`).
 *
 * @since 0.1.0
 */
export * as StructuredOutput from "./StructuredOutput.js"
/**
 * Every capability in one layer, over a configuration, an `HttpWire` and a
 * task journal.
 *
 * @since 0.1.0
 */
export * as Switchboard from "./Switchboard.js"
/**
 * Where the service is and how to talk to it.
 *
 * @since 0.1.0
 */
export * as SwitchboardConfig from "./SwitchboardConfig.js"
/**
 * The typed errors of the SDK.
 *
 * @since 0.1.0
 */
export * as SwitchboardError from "./SwitchboardError.js"
/**
 * A record of submitted video tasks, one record per task, so a restarted
 * process resumes its tasks instead of losing them or submitting them again.
 *
 * @since 0.1.0
 */
export * as TaskJournal from "./TaskJournal.js"
/**
 * The pure program behind video polling.
 *
 * @since 0.1.0
 */
export * as TaskPoller from "./TaskPoller.js"
/**
 * Spans and metrics by the OpenTelemetry semantic conventions for generative
 * AI.
 *
 * @since 0.1.0
 */
export * as Telemetry from "./Telemetry.js"
/**
 * The one place that talks HTTP.
 *
 * @since 0.1.0
 */
export * as Transport from "./Transport.js"
/**
 * Video generation as an asynchronous task (spec 3, 4.1 use 4, 4.3).
 *
 * @since 0.1.0
 */
export * as Videos from "./Videos.js"
