/**
 * @since 0.1.0
 */
export * as Emulator from "./Emulator.js"
export * as RecordingTracer from "./RecordingTracer.js"
