/**
 * Testing programs built on Switchboard, offline and deterministic. The
 * cassettes (`@switchboard/testing/Cassette`) read and write files, so they
 * are imported on their own, by Node programs only.
 *
 * @since 1.0.0
 */
export * as Reply from "./Reply.js"
export * as ScriptedModel from "./ScriptedModel.js"
export * as TestTime from "./TestTime.js"
