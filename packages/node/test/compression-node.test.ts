/**
 * Compressed replies over `NodeHttpWire` (the default Node layer) and over
 * `HttpClientWire` with each of `@effect/platform`'s clients on Node: undici
 * and node:http, which leave the coding to the wire, and fetch, which
 * decodes by itself. The cases: ./compression.ts.
 */
import { NodeSwitchboard } from "../src/index.js"
import { compressionSuite } from "./compression.js"

const apiKey = "sk-compressed-0123456789abcdef"

compressionSuite("NodeHttpWire", (baseUrl, options) => NodeSwitchboard.layer({ baseUrl, apiKey, ...options }))

