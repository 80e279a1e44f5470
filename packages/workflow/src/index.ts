/**
 * Durable video tasks and agent runs as workflows on a cluster of runners,
 * with their journal and pacing in SQL.
 *
 * @since 0.1.0
 */
export * as VideoWorkflow from "./VideoWorkflow.js"
/**
 * Where workflows run and are stored.
 *
 * @since 0.1.0
 */
export * as Cluster from "./Cluster.js"
/**
 * An agent run from `.
 *
 * @since 0.1.0
 */
export * as AgentWorkflow from "./AgentWorkflow.js"
/**
 * A `TaskJournal` in SQL (`effect/sql`.
 *
 * @since 0.1.0
 */
export * as SqlTaskJournal from "./SqlTaskJournal.js"
/**
 * An `effect/sql` client on `node:sqlite` (Node ≥ 22.5, no native build).
 *
 * @since 1.0.0
 */
export * as SqliteClient from "./SqliteClient.js"
/**
 * Pacing from the rate limits (`.
 *
 * @since 1.1.0
 */
export * as SqlPacer from "./SqlPacer.js"
/**
 * The runs `UiServer` keeps paused for approval, in SQL.
 *
 * @since 1.1.0
 */
export * as SqlApprovalStore from "./SqlApprovalStore.js"
