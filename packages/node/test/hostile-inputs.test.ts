/**
 * Caller input that is nonsense: each is a typed error naming the field (an
 * `InvalidRequestError` for a request, a `ConfigurationError` for an option),
 * and nothing is sent (the server counts what arrives).
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, Models, type Protocol, Switchboard, type SwitchboardError } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { against, apiKey, json, sdk, serve } from "./hostile.js"

const model = "gpt-4o-mini"
const user = { role: "user", content: "Hi" } as const

const withParameters = (parameters: unknown): Protocol.ChatRequest => ({
  model,
  messages: [user],
  tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { x: parameters } } } }]
})

const nested = (levels: number, leaf: unknown, wrap: (inner: unknown) => unknown) => {
  let value = leaf
  for (let i = 0; i < levels; i++) value = wrap(value)
  return value
}

const circular: Record<string, unknown> = { type: "string" }
circular["self"] = circular

const requests: ReadonlyArray<readonly [string, Protocol.ChatRequest, RegExp]> = [
  ["circular tool parameters", withParameters(circular), /^tools\[0\]\.function\.parameters\.properties\.x\.self is circular/],
  ["a BigInt in tool parameters", withParameters({ type: "integer", maximum: 10n }), /^tools\[0\]\.function\.parameters\.properties\.x\.maximum is a BigInt/],
  [
    "a throwing toJSON in tool parameters",
    withParameters({ toJSON: () => { throw new Error("no") } }),
    /^tools\[0\]\.function\.parameters\.properties\.x cannot be turned into JSON: its toJSON threw \(no\)/
  ],
  ["tool parameters 20,000 levels deep", withParameters(nested(20_000, {}, (inner) => ({ a: inner }))), /^tools\[0\]\.function\.parameters\.properties\.x(\.a)+ nests deeper than 128 levels/],
  [
    "message content 3,000 levels deep",
    { model, messages: [{ role: "user", content: nested(3_000, "x", (inner) => [inner]) as string }] },
    /^messages\[0\]\.content(\[0\])+ nests deeper than 128 levels/
  ],
  ["temperature NaN", { model, messages: [user], temperature: NaN }, /^temperature must be a finite number/],
  ["top_p Infinity", { model, messages: [user], top_p: Infinity }, /^top_p must be a finite number/],
  ["seed -Infinity", { model, messages: [user], seed: -Infinity }, /^seed must be a finite number/],
  ["max_tokens beyond a safe integer", { model, messages: [user], max_tokens: 2 ** 60 }, /^max_tokens must be a positive integer/]
]

describe("request nonsense is refused before sending, naming the field", () => {
  for (const [name, request, message] of requests) {
    it.live(name, () =>
      against(
        (_request, response) => json(response, 500, {}),
        (server) =>
          Effect.gen(function*() {
            for (const call of [Chat.create(request), Stream.runDrain(Chat.stream(request))]) {
              const error = yield* Effect.flip(call)
              expect(error._tag).toBe("InvalidRequestError")
              expect(error.message).toMatch(message)
              expect((error as { field: string }).field).toBe(error.message.split(" ")[0])
            }
            expect(server.requests()).toBe(0)
          })
      ))
  }
})

describe("configuration nonsense fails the layer, before anything is sent", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ["a negative timeout", { timeout: -1 }, "timeout"],
    ["a NaN timeout", { timeout: NaN }, "timeout"],
    ["a negative duration string", { streamIdleTimeout: "-5 seconds" }, "streamIdleTimeout"],
    ["a NaN first-byte limit", { streamFirstByteTimeout: NaN }, "streamFirstByteTimeout"],
    ["a negative total stream limit", { streamTotalTimeout: -10 }, "streamTotalTimeout"],
    ["a negative retry delay", { retryBaseDelay: -1 }, "retryBaseDelay"],
    ["an unparsable duration", { maxRetryDelay: "soon" }, "maxRetryDelay"],
    ["maxRetries below 0", { maxRetries: -1 }, "maxRetries"],
    ["maxRetries NaN", { maxRetries: NaN }, "maxRetries"],
    ["maxResponseBytes 0", { maxResponseBytes: 0 }, "maxResponseBytes"],
    ["a port out of range", { baseUrl: "http://127.0.0.1:99999" }, "baseUrl"],
    ["no host", { baseUrl: "http://:80" }, "baseUrl"],
    ["CR/LF in the key", { apiKey: "sk-abc\r\nX-Evil: 1" }, "apiKey"],
    ["CR/LF in a header", { headers: { "x-team": "a\r\nX-Evil: 1" } }, "headers.x-team"],
    ["a bad header name", { headers: { "bad name": "v" } }, "headers.bad name"],
    ["credentials in the base URL", { baseUrl: "http://user:sk-abc-pass@127.0.0.1:9/v1" }, "baseUrl"],
    ["a user name alone in the base URL", { baseUrl: "http://sk-abc@127.0.0.1:9" }, "baseUrl"],
    // Characters the HTTP stack refuses (undici: UND_ERR_INVALID_ARG on every call; fetch: a TypeError).
    ["a control character in the key", { apiKey: "sk-abc\x01" }, "apiKey"],
    ["DEL in the key", { apiKey: "sk-abc\x7f" }, "apiKey"],
    ["a character beyond Latin-1 in the key", { apiKey: "sk-abc\u2713" }, "apiKey"],
    ["a control character in a header", { headers: { "x-team": "a\x01" } }, "headers.x-team"],
    ["DEL in a header", { headers: { "x-team": "a\x7f" } }, "headers.x-team"],
    ["a character beyond Latin-1 in a header", { headers: { "x-team": "caf\u00e9 \u2713" } }, "headers.x-team"],
    // Headers that frame the exchange are the wire's own.
    ["content-length as a header", { headers: { "Content-Length": "5" } }, "headers.Content-Length"],
    ["transfer-encoding as a header", { headers: { "transfer-encoding": "chunked" } }, "headers.transfer-encoding"],
    ["host as a header", { headers: { host: "elsewhere.example" } }, "headers.host"],
    ["connection as a header", { headers: { connection: "upgrade" } }, "headers.connection"]
  ]
  for (const [name, options, field] of cases) {
    it.live(name, () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* serve((_request, response) => json(response, 200, { data: [] }))
        const error = yield* Effect.flip(Effect.provide(Models.list, sdk(server, options)))
        expect(error).toMatchObject({ _tag: "ConfigurationError", field })
        expect(error.message.startsWith(field)).toBe(true)
        expect(error.message).not.toContain("sk-abc")
        expect(server.requests()).toBe(0)
      })))
  }
})

describe("a base URL ending in an empty query or fragment fails the layer: the paths would follow it", () => {
  for (const end of ["?", "#", "/v1?", "/v1/#"]) {
    it.live(`base URL + "${end}"`, () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* serve((_request, response) => json(response, 200, { data: [] }))
        // WHATWG URL reads an empty query or fragment as none; `/v1/models` appended would then be the query.
        const error = yield* Effect.flip(Effect.provide(Models.list, sdk(server, { baseUrl: `${server.url}${end}` })))
        expect(error).toMatchObject({ _tag: "ConfigurationError", field: "baseUrl" })
        expect(server.requests()).toBe(0)
      })))
  }
})

describe("per-call headers the HTTP stack refuses fail the call, naming the header, before anything is sent", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ["a control character", { "x-team": "a\x01" }, "requestOptions.headers.x-team"],
    ["DEL", { "x-trace": "a\x7f" }, "requestOptions.headers.x-trace"],
    ["a character beyond Latin-1", { "x-api-key": `${apiKey}\u2713` }, "requestOptions.headers.x-api-key"],
    ["CR/LF", { "x-team": "a\r\nX-Evil: 1" }, "requestOptions.headers.x-team"],
    ["a name that is not a token", { "x team": "a" }, "requestOptions.headers.x team"],
    ["content-length", { "content-length": "1" }, "requestOptions.headers.content-length"],
    ["transfer-encoding", { "Transfer-Encoding": "chunked" }, "requestOptions.headers.transfer-encoding"],
    ["host", { host: "elsewhere.example" }, "requestOptions.headers.host"]
  ]
  for (const [name, headers, field] of cases) {
    it.live(name, () =>
      against(
        (_request, response) => json(response, 200, { data: [] }),
        (server) =>
          Effect.gen(function*() {
            const calls: ReadonlyArray<Effect.Effect<unknown, SwitchboardError.SwitchboardError, Chat.Chat | Models.Models>> = [
              Models.list,
              Stream.runDrain(Chat.stream({ model, messages: [user] }))
            ]
            for (const call of calls) {
              const error = yield* Effect.flip(call.pipe(Switchboard.withRequestOptions({ headers })))
              expect(error).toMatchObject({ _tag: "ConfigurationError", field })
              expect(error.message.startsWith(field)).toBe(true)
              expect(error.message).not.toContain(apiKey)
            }
            expect(server.requests()).toBe(0)
          })
      ))
  }
})
