/**
 * @since 0.1.0
 */
export * as VideoWorkflow from "./VideoWorkflow.js"
export * as Cluster from "./Cluster.js"
export * as AgentWorkflow from "./AgentWorkflow.js"
export * as SqlTaskJournal from "./SqlTaskJournal.js"
export * as SqliteClient from "./SqliteClient.js"
export * as SqlPacer from "./SqlPacer.js"
export * as SqlApprovalStore from "./SqlApprovalStore.js"
