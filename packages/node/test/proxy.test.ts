/**
 * Proxies (issue 33, case 10): with `HTTP_PROXY` / `HTTPS_PROXY` set (or
 * their lower-case forms), the Node wire goes through the proxy, except to
 * the hosts `NO_PROXY` lists; `proxy: "none"` goes direct; `dispatcher` is
 * used as given. The proxy is a real one, a small `node:http` server that
 * tunnels `CONNECT` (and forwards plain requests), recording what it got.
 * Its credentials never appear in an error.
 *
 * The variables are the process's: each test sets them around building its
 * layer (the wire reads them then) and puts them back.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as Net from "node:net"
import { inspect } from "node:util"
import { ProxyAgent } from "undici"
import { NodeSwitchboard } from "../src/index.js"
import { apiKey, json, serve } from "./hostile.js"

const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "through a proxy" }] } satisfies Protocol.ChatRequest
const completion = { id: "c", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] }

const user = "proxy-user"
const password = "pr0xy-s3cret-pass"
const basic = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`

interface Proxy {
  readonly url: string
  /** With the credentials: `http://user:password@127.0.0.1:PORT`. */
  readonly withCredentials: string
  /** `CONNECT host:port` or `GET http://…` for each request it got, with whether it carried the credentials. */
  readonly seen: Array<string>
}

/** A forward proxy on 127.0.0.1 that wants the credentials (407 without them). */
const proxy = Effect.acquireRelease(
  Effect.callback<{ readonly server: Http.Server; readonly proxy: Proxy }>((resume) => {
    const seen: Array<string> = []
    const sockets = new Set<Net.Socket>()
    const authorized = (request: Http.IncomingMessage) => request.headers["proxy-authorization"] === basic
    const server = Http.createServer((request, response) => {
      seen.push(`${request.method} ${request.url} ${authorized(request) ? "with" : "without"} credentials`)
      if (!authorized(request)) return void response.writeHead(407).end()
      const target = new URL(request.url ?? "")
      const { "proxy-authorization": _, ...headers } = request.headers
      request.pipe(Http.request(target, { method: request.method, headers }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      }))
    })
    server.on("connect", (request: Http.IncomingMessage, client: Net.Socket, head: Buffer) => {
      seen.push(`CONNECT ${request.url} ${authorized(request) ? "with" : "without"} credentials`)
      if (!authorized(request)) return void client.end("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
      const [host, port] = (request.url ?? "").split(":")
      const upstream = Net.connect(Number(port), host, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
        upstream.write(head)
        upstream.pipe(client)
        client.pipe(upstream)
      })
      for (const socket of [upstream, client]) socket.on("error", () => [upstream, client].forEach((s) => s.destroy()))
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.once("close", () => sockets.delete(socket))
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      resume(Effect.succeed({
        server,
        proxy: { url: `http://127.0.0.1:${port}`, withCredentials: `http://${user}:${password}@127.0.0.1:${port}`, seen }
      }))
    })
    server.on("close", () => sockets.forEach((socket) => socket.destroy()))
  }),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ proxy }) => proxy))

const proxyVariables = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"]

/** `effect` with exactly these proxy variables set; the others unset; all put back after. */
const withEnvironment = <A, E, R>(variables: Record<string, string>, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = Object.fromEntries(proxyVariables.map((name) => [name, process.env[name]]))
      for (const name of proxyVariables) delete process.env[name]
      Object.assign(process.env, variables)
      return saved
    }),
    () => effect,
    (saved) =>
      Effect.sync(() => {
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[name]
          else process.env[name] = value
        }
      })
  )

/** A service that answers every chat, counting what reached it. */
const service = serve((_request, response) => json(response, 200, completion))

const chat = (baseUrl: string, options: Partial<NodeSwitchboard.Options> = {}) =>
  Effect.provide(Chat.create(hello), NodeSwitchboard.layer({ baseUrl, apiKey, maxRetries: 0, ...options }))

/** Nothing of the proxy's credentials in an error, however it is shown. */
const expectNoCredentials = (error: unknown) => {
  for (const shown of [String(error), JSON.stringify(error), inspect(error, { depth: 10 })]) {
    expect(shown).not.toContain(password)
    expect(shown).not.toContain(basic.slice("Basic ".length))
  }
}

describe("the Node wire honours the proxy variables", () => {
  it.live("HTTP_PROXY: the request goes through the proxy, with its credentials", () =>
    Effect.scoped(Effect.gen(function*() {
      const via = yield* proxy
      const target = yield* service
      const reply = yield* withEnvironment({ HTTP_PROXY: via.withCredentials }, chat(target.url))
      expect(reply.choices[0]?.message.content).toBe("hi")
      expect(via.seen).toEqual([`CONNECT ${new URL(target.url).host} with credentials`])
      expect(target.requests()).toBe(1)
    })))

  it.live("the lower-case form first: http_proxy over HTTP_PROXY", () =>
    Effect.scoped(Effect.gen(function*() {
      const via = yield* proxy
      const target = yield* service
      const gone = yield* Effect.scoped(proxy)
      yield* withEnvironment({ http_proxy: via.withCredentials, HTTP_PROXY: gone.url }, chat(target.url))
      expect(via.seen).toHaveLength(1)
    })))

  it.live("NO_PROXY (or no_proxy) listing the host: straight to the service", () =>
    Effect.scoped(Effect.gen(function*() {
      const via = yield* proxy
      const target = yield* service
      const port = new URL(target.url).port
      for (const noProxy of [{ NO_PROXY: "127.0.0.1" }, { no_proxy: `example.com, 127.0.0.1:${port}` }, { NO_PROXY: "*" }]) {
        yield* withEnvironment({ HTTP_PROXY: via.withCredentials, ...noProxy }, chat(target.url))
      }
      expect(via.seen).toEqual([])
      expect(target.requests()).toBe(3)
      // Another port of the host is not the one listed: that one goes through the proxy.
      yield* withEnvironment({ HTTP_PROXY: via.withCredentials, NO_PROXY: "127.0.0.1:1" }, chat(target.url))
      expect(via.seen).toHaveLength(1)
    })))

  it.live("HTTPS_PROXY alone is for https URLs: an http one goes direct", () =>
    Effect.scoped(Effect.gen(function*() {
      const via = yield* proxy
      const target = yield* service
      yield* withEnvironment({ HTTPS_PROXY: via.withCredentials }, chat(target.url))
      expect(via.seen).toEqual([])
    })))

  it.live(`proxy: "none" goes direct whatever the environment says`, () =>
    Effect.scoped(Effect.gen(function*() {
      const via = yield* proxy
      const target = yield* service
      yield* withEnvironment({ HTTP_PROXY: via.withCredentials, HTTPS_PROXY: via.withCredentials }, chat(target.url, { proxy: "none" }))
      expect(via.seen).toEqual([])
      expect(target.requests()).toBe(1)
    })))

  it.live("a dispatcher of the caller's is used as given, and left open", () =>
    Effect.scoped(Effect.gen(function*() {
      const via = yield* proxy
      const target = yield* service
      const dispatcher = new ProxyAgent({ uri: via.withCredentials })
      yield* Effect.addFinalizer(() => Effect.promise(() => dispatcher.close()))
      // Two layers, one after the other: the first one's end leaves the dispatcher working.
      yield* withEnvironment({}, chat(target.url, { dispatcher }))
      yield* withEnvironment({}, chat(target.url, { dispatcher }))
      expect(via.seen.every((line) => line.startsWith("CONNECT") && line.endsWith("with credentials"))).toBe(true)
      expect(via.seen.length).toBeGreaterThan(0)
      expect(target.requests()).toBe(2)
    })))

  it.live("the proxy's credentials never appear in an error: a proxy refusing them, one that is gone", () =>
    Effect.scoped(Effect.gen(function*() {
      const via = yield* proxy
      const target = yield* service
      const port = new URL(via.url).port
      const refused = yield* withEnvironment(
        { HTTP_PROXY: `http://${user}:wrong-${password}@127.0.0.1:${port}` },
        Effect.flip(chat(target.url))
      )
      expect(refused._tag).toBe("TransportError")
      expectNoCredentials(refused)
      const gone = yield* Effect.scoped(proxy)
      const unreachable = yield* withEnvironment(
        { HTTP_PROXY: gone.withCredentials },
        Effect.flip(chat(target.url))
      )
      expect(unreachable._tag).toBe("TransportError")
      expectNoCredentials(unreachable)
      expect(target.requests()).toBe(0)
    })))

  it.live("a proxy variable that is no proxy URL: a ConfigurationError naming it, never its value", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["HTTPS_PROXY", `${user}:${password}@proxy.internal:3128`],
        ["http_proxy", `ftp://${user}:${password}@x`]
      ]
      for (const [name, value] of cases) {
        const error = yield* withEnvironment({ [name]: value }, Effect.flip(chat("http://127.0.0.1:1")))
        expect(error).toMatchObject({ _tag: "ConfigurationError", field: name })
        expectNoCredentials(error)
      }
      const option = yield* Effect.flip(chat("http://127.0.0.1:1", { proxy: "off" as "none" }))
      expect(option).toMatchObject({ _tag: "ConfigurationError", field: "proxy" })
    }))
})
