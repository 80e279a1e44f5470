/**
 * The browser layer: Switchboard over the page's `fetch`, with no API key in
 * the page, attachments from `Blob`s and a task journal in IndexedDB.
 *
 * @since 0.1.0
 */
export * as BrowserAttachment from "./BrowserAttachment.js"
/**
 * The `HttpWire` over the page's `fetch`, with nothing in between.
 *
 * @since 0.1.0
 */
export * as BrowserHttpWire from "./BrowserHttpWire.js"
/**
 * Every Switchboard capability in a web page, over `fetch`.
 *
 * @since 0.1.0
 */
export * as BrowserSwitchboard from "./BrowserSwitchboard.js"
/**
 * Task journals for a page.
 *
 * @since 0.1.0
 */
export * as BrowserTaskJournal from "./BrowserTaskJournal.js"
