export * as NodeAttachment from "./NodeAttachment.js"
export * as NodeSwitchboard from "./NodeSwitchboard.js"
export * as NodeTaskJournal from "./NodeTaskJournal.js"
export * as NodeMedia from "./NodeMedia.js"
