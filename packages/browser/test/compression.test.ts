/**
 * Compressed replies over `BrowserHttpWire`, under Node's fetch (undici),
 * which decodes gzip, deflate and br by itself: the cases are Node's
 * (../../node/test/compression.ts), so every wire meets the same ones.
 */
import { BrowserSwitchboard } from "../src/index.js"
import { compressionSuite } from "../../node/test/compression.js"

compressionSuite("BrowserHttpWire (Node's fetch)", (baseUrl, options) =>
  BrowserSwitchboard.layerChat({ baseUrl, apiKey: "sk-compressed-0123456789abcdef", allowApiKeyInBrowser: true, ...options }))
