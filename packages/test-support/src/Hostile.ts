/**
 * Hostile servers: a `node:http` server on 127.0.0.1 whose handler a test
 * writes, to send what no well-behaved service would. Every socket is
 * destroyed when the scope closes, so a test never waits on a body it stopped
 * reading. Shared by the tests of node, ai and agent.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Util from "node:util"
import { expect } from "@effect/vitest"

export interface Hostile {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string
  /** Requests received so far. */
  readonly requests: () => number
  /** The bodies of the requests received so far. */
  readonly bodies: ReadonlyArray<string>
  /** Sockets open right now. */
  readonly openSockets: () => number
}

export type Handler = (request: Http.IncomingMessage, response: Http.ServerResponse, body: string) => void

/** A server answering every request with `handler`, for the scope's lifetime. */
export const serve = (handler: Handler): Effect.Effect<Hostile, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Http.Server; readonly hostile: Hostile }>((resume) => {
      const sockets = new Set<Net.Socket>()
      const bodies: Array<string> = []
      const server = Http.createServer((request, response) => {
        const parts: Array<Buffer> = []
        request.on("data", (part: Buffer) => parts.push(part))
        request.on("end", () => {
          const body = Buffer.concat(parts).toString()
          bodies.push(body)
          handler(request, response, body)
        })
      })
      server.on("connection", (socket) => {
        sockets.add(socket)
        socket.once("close", () => sockets.delete(socket))
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address() as Net.AddressInfo
        resume(Effect.succeed({
          server,
          hostile: {
            url: `http://127.0.0.1:${address.port}`,
            requests: () => bodies.length,
            bodies,
            openSockets: () => sockets.size
          }
        }))
      })
      server.on("close", () => sockets.forEach((socket) => socket.destroy()))
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ hostile }) => hostile))

/** A JSON reply. */
export const json = (response: Http.ServerResponse, status: number, body: unknown, headers: Http.OutgoingHttpHeaders = {}) => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers })
  response.end(text)
}

/** Server-sent events, written at once. */
export const sse = (response: Http.ServerResponse, text: string) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  response.end(text)
}

/**
 * A `StructuredOutputError` for a value that echoes `key` first and is 1 MiB
 * long (`{"a": key, "pad": …}`), as it must be shown: its `text` redacted
 * and its first 4,000 characters, the key nowhere in the error.
 */
export const expectShownValue = (error: { readonly _tag: string }, key: string) => {
  expect(error._tag).toBe("StructuredOutputError")
  const { issue, text } = error as unknown as { readonly text: string; readonly issue: string }
  expect(issue).not.toContain(key)
  expect(text.startsWith(`{"a":"[redacted]"`)).toBe(true)
  expect(text.length).toBeLessThan(4100)
  expect(Util.inspect(error, { depth: 10 })).not.toContain(key)
}
