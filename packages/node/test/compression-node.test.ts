/**
 * Compressed replies over `NodeHttpWire` (the default Node layer) and over
 * `HttpClientWire` with each of `@effect/platform-node`'s clients: undici
 * and node:http, which leave the coding to the wire, and fetch, which
 * decodes by itself. The cases: ./compression.ts.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Switchboard, SwitchboardConfig, TaskJournal } from "@switchboard/core"
import * as HttpClientWire from "@switchboard/core/HttpClientWire"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import { NodeSwitchboard } from "../src/index.js"
import { compressionSuite } from "./compression.js"

const apiKey = "sk-compressed-0123456789abcdef"

compressionSuite("NodeHttpWire", (baseUrl, options) => NodeSwitchboard.layer({ baseUrl, apiKey, ...options }))

const overClient = (client: Layer.Layer<HttpClient.HttpClient>) => (baseUrl: string, options: Partial<SwitchboardConfig.Options>) =>
  Switchboard.layer.pipe(
    Layer.provideMerge(SwitchboardConfig.layer({ baseUrl, apiKey, ...options })),
    Layer.provide(TaskJournal.layerMemory),
    Layer.provide(HttpClientWire.layer),
    Layer.provide(client)
  )

compressionSuite("HttpClientWire on NodeHttpClient.layerUndici", overClient(NodeHttpClient.layerUndici))
compressionSuite("HttpClientWire on NodeHttpClient.layerNodeHttp (node:http)", overClient(NodeHttpClient.layerNodeHttp))
compressionSuite("HttpClientWire on FetchHttpClient", overClient(FetchHttpClient.layer))
