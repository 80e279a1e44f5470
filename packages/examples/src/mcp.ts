import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Agent, McpTools } from "@switchboard/agent"
import { NodeSwitchboard } from "@switchboard/node"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as McpServer from "effect/ai/McpServer"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { createServer } from "node:http"

// A toolkit as any agent run takes it, with its handlers.
const GetWeather = Tool.make("get_weather", {
  description: "Current temperature in a city",
  parameters: Schema.Struct({ city: Schema.String.annotate({ description: "City name" }) }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite })
}).annotate(Tool.Readonly, true)
const toolkit = Toolkit.make(GetWeather)
const handlers = toolkit.toLayer({ get_weather: ({ city }) => Effect.succeed({ city, celsius: 21 }) })

// 1. The same toolkit served as an MCP server (streamable HTTP at /mcp) with effect/ai's McpServer.
const WeatherMcp = HttpRouter.serve(
  McpServer.layerHttp({
    name: "weather",
    version: "1.0.0",
    path: "/mcp",
    protocols: [McpProtocol.v2025_11_25],
    registrations: McpServer.toolkit(toolkit).pipe(Layer.provide(handlers))
  }),
  { disableListenLog: true, disableLogger: true }
).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))

// 2. An agent using an MCP server's tools: connected for the scope, a prefix on each name.
const program = Effect.gen(function*() {
  const url = yield* HttpServer.addressFormattedWith((address) => Effect.succeed(`${address}/mcp`))
  const mcp = yield* McpTools.connect({
    servers: [McpTools.http({ name: "weather", url, prefix: "weather_", timeout: "10 seconds" })]
  })
  for (const n of mcp.names) console.log(`${n.name} calls ${n.tool} on ${n.server} (read-only: ${n.readOnly})`)
  const result = yield* Agent.run({
    model: "gpt-4o-mini",
    toolkit: mcp.toolkit,
    // The emulator calls the tools a message names (docs/emulator.md); a real model picks them itself.
    messages: [{ role: "user", content: `weather_get_weather({"city": "Paris"})` }]
  })
  console.log(result.text)
}).pipe(Effect.scoped) // the scope's end closes the MCP session

await program.pipe(
  Effect.provide(Layer.mergeAll(WeatherMcp, NodeSwitchboard.layerConfig(), NodeServices.layer, FetchHttpClient.layer)),
  Effect.runPromise
)
