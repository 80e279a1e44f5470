/**
 * A local emulator of the model service, for tests and demos, and a tracer
 * that records spans.
 *
 * @since 0.1.0
 */
export * as Emulator from "./Emulator.js"
/**
 * A tracer that keeps every span a program starts, for tests that check what
 * a run traced (names, attributes, parents) without an exporter.
 *
 * @since 0.1.0
 */
export * as RecordingTracer from "./RecordingTracer.js"
