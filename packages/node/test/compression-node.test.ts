/**
 * Compressed replies over `NodeHttpWire` (the default Node layer) and over
 * `HttpClientWire` with each of `@effect/platform`'s clients on Node: undici
 * and node:http, which leave the coding to the wire, and fetch, which
 * decodes by itself. The cases: ./compression.ts.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Switchboard, SwitchboardConfig, TaskJournal } from "@switchboard/core"
import * as HttpClientWire from "@switchboard/core/HttpClientWire"
import * as Layer from "effect/Layer"
import { NodeSwitchboard } from "../src/index.js"
import { compressionSuite } from "./compression.js"

const apiKey = "sk-compressed-0123456789abcdef"

compressionSuite("NodeHttpWire", (baseUrl, options) => NodeSwitchboard.layer({ baseUrl, apiKey, ...options }))

const overClient = (client: Layer.Layer<import("@effect/platform/HttpClient").HttpClient>) => (baseUrl: string, options: Partial<SwitchboardConfig.Options>) =>
  Switchboard.layer.pipe(
    Layer.provideMerge(SwitchboardConfig.layer({ baseUrl, apiKey, ...options })),
    Layer.provide(TaskJournal.layerMemory),
    Layer.provide(HttpClientWire.layer),
    Layer.provide(client)
  )

compressionSuite("HttpClientWire on NodeHttpClient.layerUndici", overClient(NodeHttpClient.layerUndici))
compressionSuite("HttpClientWire on NodeHttpClient.layer (node:http)", overClient(NodeHttpClient.layer))
compressionSuite("HttpClientWire on FetchHttpClient", overClient(FetchHttpClient.layer))
