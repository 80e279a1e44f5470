/**
 * `switchboard serve`: a chat page and its API on 127.0.0.1. The page
 * (page/main.tsx, bundled with `@ai-sdk/react` into dist/page at build time)
 * talks to `/api/chat`, served by `@switchboard/agent`'s `UiServer.agent`
 * with the tools of `ServeTools`, against the embedded emulator or the
 * service.
 *
 * @since 1.0.0
 */
import { UiServer } from "@switchboard/agent"
import * as Emulator from "@switchboard/emulator/Emulator"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Fs from "node:fs"
import * as Http from "node:http"
import { fileURLToPath } from "node:url"
import * as Connection from "./Connection.js"
import * as Errors from "./Errors.js"
import * as Output from "./Output.js"
import * as ServeTools from "./ServeTools.js"

/**
 * What `switchboard serve` takes: the service (or the embedded emulator),
 * where to listen, and the model.
 *
 * @since 1.0.0
 * @category models
 */
export interface Options extends Pick<Connection.Flags, "baseUrl" | "apiKey"> {
  readonly port: number
  readonly model: string
  /** The bundled page (index.html, page.js); default: dist/page of this package. */
  readonly pageDirectory?: string | undefined
  /** Options of the embedded emulator; default: streams paced at 30 ms an event, so that the page shows text arriving. */
  readonly emulator?: Emulator.Options | undefined
  /** Called with the page's address once it listens (tests). */
  readonly onListening?: ((url: string) => Effect.Effect<void>) | undefined
}

/** dist/page, from dist/bundle/*.js, dist/Serve.js or src/Serve.ts. */
const pageDirectory = () =>
  ["../page/", "./page/", "../dist/page/"]
    .map((relative) => fileURLToPath(new URL(relative, import.meta.url)))
    .find((dir) => Fs.existsSync(`${dir}page.js`))

/** The page's two files, read once. */
const pageFiles = (dir: string | undefined) =>
  Effect.suspend(() => {
    if (dir === undefined || !Fs.existsSync(`${dir}page.js`)) {
      return Effect.fail(new Errors.UsageError({ message: "the chat page is not built yet: run `pnpm build` in the repository first" }))
    }
    return Effect.succeed({ html: Fs.readFileSync(`${dir}index.html`, "utf8"), js: Fs.readFileSync(`${dir}page.js`, "utf8") })
  })

/** The page, and the agent at `/api/chat`. */
const app = (files: { readonly html: string; readonly js: string }, model: string) => {
  const chat = UiServer.agent({ model, toolkit: ServeTools.toolkit })
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = new URL(request.url, "http://127.0.0.1").pathname
    if (request.method === "GET" && path === "/") return HttpServerResponse.text(files.html, { contentType: "text/html; charset=utf-8" })
    if (request.method === "GET" && path === "/page.js") return HttpServerResponse.text(files.js, { contentType: "text/javascript; charset=utf-8" })
    if (request.method === "POST" && path === "/api/chat") return yield* chat
    return HttpServerResponse.empty({ status: 404 })
  })
}

/** The service from the flags or the environment, else the embedded emulator (paced, so text streams visibly). */
const service = (options: Options) =>
  Effect.map(Connection.lookup(options), (found) => {
    const given = Option.all({ baseUrl: found.baseUrl, apiKey: found.apiKey })
    if (Option.isSome(given)) return { against: given.value.baseUrl, layer: Connection.layerFrom(given.value) }
    const layer = Layer.unwrap(Effect.map(Emulator.Emulator, (emulator) =>
      Connection.layerFrom({ baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) })))
      .pipe(Layer.provide(Emulator.layer(options.emulator ?? { stream: { interval: 30 } })))
    return { against: "the embedded emulator", layer }
  })

/**
 * Serves until interrupted.
 *
 * @since 1.0.0
 * @category programs
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const files = yield* pageFiles(options.pageDirectory ?? pageDirectory())
    const { against, layer } = yield* service(options)
    const server = HttpServer.serve(app(files, options.model)).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => Http.createServer(), { port: options.port, host: "127.0.0.1" })),
      Layer.provide(Layer.mergeAll(layer, ServeTools.handlers, UiServer.layerMemory()))
    )
    return yield* Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(server)
      const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
      yield* Output.line(`Switchboard chat page on ${Output.bold(url)} (model ${options.model}, against ${against})`)
      yield* Output.line(Output.dim(`Open it in a browser; the starter message calls both tools. Ctrl-C stops it.`))
      if (options.onListening) yield* options.onListening(url)
      return yield* Effect.never
    }))
  })
