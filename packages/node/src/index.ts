/**
 * The Node.js layer: Switchboard over Node's HTTP, attachments from files,
 * saving media and a task journal on disk.
 *
 * @since 0.1.0
 */
export * as NodeAttachment from "./NodeAttachment.js"
/**
 * The `HttpWire` over undici's `Dispatcher.dispatch`, with no stream or
 * promise in between.
 *
 * @since 0.1.0
 */
export * as NodeHttpWire from "./NodeHttpWire.js"
/**
 * Every Switchboard capability over Node's undici HTTP client (keep-alive),
 * through `NodeHttpWire`.
 *
 * @since 0.1.0
 */
export * as NodeSwitchboard from "./NodeSwitchboard.js"
/**
 * A task journal in a directory, safe for several processes of one machine
 * sharing it.
 *
 * @since 0.1.0
 */
export * as NodeTaskJournal from "./NodeTaskJournal.js"
/**
 * Saving generated media to disk.
 *
 * @since 0.1.0
 */
export * as NodeMedia from "./NodeMedia.js"
