/**
 * The wire contract every wire passes (`@switchboard/test-support/WireConformance`)
 * for `BrowserHttpWire`, over Node's fetch (undici) and real HTTP: the suite
 * registers vitest tests around a `node:http` server, which a page cannot
 * run, so Chromium runs the page checks of `browser.test.ts` instead.
 */
import * as WireConformance from "@switchboard/test-support/WireConformance"
import * as BrowserHttpWire from "../src/BrowserHttpWire.js"

WireConformance.suite("BrowserHttpWire over Node's fetch", BrowserHttpWire.layer)
