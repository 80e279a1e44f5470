/**
 * The wire contract (`@switchboard/test-support/WireConformance`) for every wire
 * that runs in Node, over real HTTP: `NodeHttpWire`, and core's
 * `HttpClientWire` over effect/http's fetch client and over
 * `@effect/platform-node`'s undici client.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClientWire from "@switchboard/core/HttpClientWire"
import * as WireConformance from "@switchboard/test-support/WireConformance"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import { NodeHttpWire } from "../src/index.js"

WireConformance.suite("NodeHttpWire", NodeHttpWire.layer)
WireConformance.suite("HttpClientWire over FetchHttpClient", HttpClientWire.layer.pipe(Layer.provide(FetchHttpClient.layer)))
WireConformance.suite("HttpClientWire over NodeHttpClient (undici)", HttpClientWire.layer.pipe(Layer.provide(NodeHttpClient.layerUndici)))
