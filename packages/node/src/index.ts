export * as NodeSwitchboard from "./NodeSwitchboard.js"
