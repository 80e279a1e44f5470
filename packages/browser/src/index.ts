/**
 * @since 0.1.0
 */
export * as BrowserAttachment from "./BrowserAttachment.js"
export * as BrowserHttpWire from "./BrowserHttpWire.js"
export * as BrowserSwitchboard from "./BrowserSwitchboard.js"
export * as BrowserTaskJournal from "./BrowserTaskJournal.js"
