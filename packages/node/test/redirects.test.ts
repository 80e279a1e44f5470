/**
 * A redirect on an API call is a `ClientError` naming its status and where it
 * points, and is never followed, over every wire that runs in Node (issue 33,
 * case 2): following one handed the request's secret headers and prompt to
 * the host it named, and returned that host's reply as a success. A second
 * real server, on another port, records whether it was reached: it never is.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol, Switchboard, SwitchboardConfig, TaskJournal } from "@switchboard/core"
import * as HttpClientWire from "@switchboard/core/HttpClientWire"
import type { ConfigurationError } from "@switchboard/core/SwitchboardError"
import type * as HttpWire from "@switchboard/core/HttpWire"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { NodeHttpWire } from "../src/index.js"
import { json, serve } from "./hostile.js"

const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "a private prompt" }] } satisfies Protocol.ChatRequest

const wires: ReadonlyArray<readonly [string, Layer.Layer<HttpWire.HttpWire, ConfigurationError>]> = [
  ["NodeHttpWire", NodeHttpWire.layer],
  ["HttpClientWire over FetchHttpClient", HttpClientWire.layer.pipe(Layer.provide(FetchHttpClient.layer))],
  ["HttpClientWire over NodeHttpClient", HttpClientWire.layer.pipe(Layer.provide(NodeHttpClient.layerUndici))]
]

const sdk = (baseUrl: string, wire: Layer.Layer<HttpWire.HttpWire, ConfigurationError>) =>
  Switchboard.layer.pipe(
    Layer.provideMerge(SwitchboardConfig.layer({
      baseUrl,
      apiKey: "sk-redirect-0123456789",
      headers: { "x-api-key": "sk-custom-secret-header" },
      maxRetries: 1,
      retryBaseDelay: 0
    })),
    Layer.provide(TaskJournal.layerMemory),
    Layer.provide(wire)
  )

/** Another origin that would answer a followed request with a success, recording who reached it. */
const elsewhere = serve((request, response) => {
  json(response, 200, {
    id: "c",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, message: { role: "assistant", content: `reached with ${String(request.headers["x-api-key"])}` }, finish_reason: "stop" }]
  })
})

describe("a redirect is a ClientError, never followed, over every wire", () => {
  for (const [name, wire] of wires) {
    it.live(`${name}: 301, 302, 303, 307, 308 to another origin or the same, whole and streamed`, () =>
      Effect.scoped(Effect.gen(function*() {
        const other = yield* elsewhere
        for (const status of [301, 302, 303, 307, 308]) {
          for (const location of [`${other.url}/v1/chat/completions`, "/moved/v1/chat/completions"]) {
            const paths: Array<string> = []
            const service = yield* serve((request, response) => {
              paths.push(request.url ?? "")
              if (request.url?.startsWith("/moved")) return json(response, 200, {})
              response.writeHead(status, { location })
              response.end()
            })
            const layer = sdk(service.url, wire)
            const whole = yield* Effect.flip(Effect.provide(Chat.create(hello), layer))
            const streamed = yield* Effect.flip(Effect.provide(Stream.runDrain(Chat.streamText(hello)), layer))
            for (const error of [whole, streamed]) {
              expect(error, `${status} to ${location}`).toMatchObject({ _tag: "ClientError", status })
              expect(error.message).toContain(location)
            }
            // Asked once each (a ClientError is not retried), never at the place it points to.
            expect(paths).toEqual(["/v1/chat/completions", "/v1/chat/completions"])
          }
        }
        expect(other.requests()).toBe(0)
      })), 30_000)
  }

  it.live("a fetch of the caller's that follows anyway: a ClientError naming where it went, not the other host's reply", () =>
    Effect.scoped(Effect.gen(function*() {
      const other = yield* elsewhere
      const service = yield* serve((_request, response) => {
        // 302: fetch follows it with a GET (a 307 would resend the body, which undici's fetch fails on here).
        response.writeHead(302, { location: `${other.url}/v1/chat/completions?token=sk-in-query` })
        response.end()
      })
      // A `Fetch` that ignores the wire's `redirect: "manual"`.
      const following: typeof fetch = (input, init) => fetch(input, { ...init, redirect: "follow" })
      const wire = HttpClientWire.layer.pipe(
        Layer.provide(FetchHttpClient.layer),
        Layer.provide(Layer.succeed(FetchHttpClient.Fetch, following))
      )
      const error = yield* Effect.flip(Effect.provide(Chat.create(hello), sdk(service.url, wire)))
      expect(error).toMatchObject({ _tag: "ClientError" })
      expect(error.message).toContain(`${other.url}/v1/chat/completions`)
      expect(error.message).not.toContain("sk-in-query")
    })))
})
