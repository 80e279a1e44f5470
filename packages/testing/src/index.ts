/**
 * Testing programs built on Switchboard, offline and deterministic. The
 * cassettes (`@switchboard/testing/Cassette`) read and write files, so they
 * are imported on their own, by Node programs only.
 *
 * @since 1.0.0
 */
export * as Reply from "./Reply.js"
/**
 * A scripted model service, served at the wire.
 *
 * @since 1.0.0
 */
export * as ScriptedModel from "./ScriptedModel.js"
/**
 * Time for a program under test that sleeps on Effect's `Clock`.
 *
 * @since 1.0.0
 */
export * as TestTime from "./TestTime.js"
