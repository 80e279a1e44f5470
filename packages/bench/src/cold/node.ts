/**
 * Cold start, Node alone: start, report, exit. The floor under every other
 * row. `node dist/cold/node.js`.
 */
import { imported } from "./report.js"

imported()
