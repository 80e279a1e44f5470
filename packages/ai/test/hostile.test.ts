/**
 * `@switchboard/ai` against hostile replies (issue 26, case 5), over real
 * HTTP from a `node:http` server: the same protections as core — bounded
 * memory on a stream, no prototype from a model's JSON, bounded and
 * redacted messages — and statuses as the `AiError` variants `@effect/ai`
 * users match on.
 */
import * as AiTool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import * as LanguageModel from "@effect/ai/LanguageModel"
import { describe, expect, it } from "@effect/vitest"
import { NodeSwitchboard } from "@switchboard/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import { type Handler, json, serve } from "@switchboard/testing/Hostile"
import { SwitchboardLanguageModel } from "../src/index.js"

const MiB = 1024 * 1024
const apiKey = "sk-hostile-0123456789abcdef"

/** Runs `use` with `handler` as the service, the provider over it: no retries, `maxResponseBytes` as given. */
const against = <A, E, R>(handler: Handler, use: Effect.Effect<A, E, R>, maxResponseBytes?: number) =>
  Effect.scoped(Effect.flatMap(serve(handler), (hostile) =>
    Effect.provide(
      use,
      SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
        Layer.provideMerge(NodeSwitchboard.layer({ baseUrl: hostile.url, apiKey, maxRetries: 0, maxResponseBytes })),
        Layer.orDie
      )
    ) as Effect.Effect<A, E, Exclude<R, LanguageModel.LanguageModel>>))

const completionWithCall = (name: string, args: string) => ({
  id: "x",
  choices: [{
    index: 0,
    finish_reason: "tool_calls",
    message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name, arguments: args } }] }
  }]
})

const streamWithCall = (name: string, args: string) => (_request: unknown, response: Http.ServerResponse) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  response.end(
    chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name, arguments: "" } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }) +
      chunk({}, "tool_calls") + "data: [DONE]\n\n"
  )
}

const Configure = AiTool.make("configure", {
  parameters: { extra: Schema.Record({ key: Schema.String, value: Schema.Unknown }) },
  success: Schema.String
})
const kit = AiToolkit.make(Configure)

/** What the handler saw: an inherited `isAdmin`, and whether the record's prototype is Object's. */
const seenBy = (seen: Ref.Ref<unknown>) =>
  kit.toLayer({
    configure: ({ extra }) =>
      Effect.as(Ref.set(seen, { isAdmin: (extra as { isAdmin?: unknown }).isAdmin, plain: Object.getPrototypeOf(extra) === Object.prototype }), "ok")
  })

const polluting = `{"extra":{"__proto__":{"isAdmin":true},"a":1}}`

describe("tool arguments: no prototype from the model's JSON", () => {
  it.live("generateText", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<unknown>(undefined)
      yield* against(
        (_request, response) => json(response, 200, completionWithCall("configure", polluting)),
        LanguageModel.generateText({ prompt: "Configure", toolkit: kit }).pipe(Effect.provide(seenBy(seen)))
      )
      expect(yield* Ref.get(seen)).toEqual({ isAdmin: undefined, plain: true })
    }))

  it.live("streamText", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<unknown>(undefined)
      yield* against(
        streamWithCall("configure", polluting),
        Stream.runDrain(LanguageModel.streamText({ prompt: "Configure", toolkit: kit })).pipe(Effect.provide(seenBy(seen)))
      )
      expect(yield* Ref.get(seen)).toEqual({ isAdmin: undefined, plain: true })
    }))

  it.live("generateObject", () =>
    Effect.gen(function*() {
      const Options = Schema.Struct({ extra: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
      const result = yield* against(
        (_request, response) => json(response, 200, completionWithCall("respond", polluting)),
        LanguageModel.generateObject({ prompt: "Options", schema: Options })
      )
      expect((result.value.extra as { isAdmin?: unknown }).isAdmin).toBeUndefined()
      expect(Object.getPrototypeOf(result.value.extra)).toBe(Object.prototype)
    }))
})

describe("a model's bad JSON: a bounded message without the key", () => {
  const echo = `{"key":"${apiKey}",${"x".repeat(5 * MiB)}`
  const bounded = (error: { readonly _tag: string; readonly message: string }) => {
    expect(error._tag).toBe("MalformedOutput")
    expect(error.message.length).toBeLessThan(2000)
    expect(error.message).not.toContain(apiKey)
  }

  it.live("generateText", () =>
    Effect.map(
      Effect.flip(against(
        (_request, response) => json(response, 200, completionWithCall("configure", echo)),
        LanguageModel.generateText({ prompt: "Configure", toolkit: kit }).pipe(Effect.provide(seenBy(Ref.unsafeMake<unknown>(undefined))))
      )),
      bounded
    ))

  it.live("streamText", () =>
    Effect.map(
      Effect.flip(against(
        streamWithCall("configure", echo),
        Stream.runDrain(LanguageModel.streamText({ prompt: "Configure", toolkit: kit })).pipe(
          Effect.provide(seenBy(Ref.unsafeMake<unknown>(undefined)))
        )
      )),
      bounded
    ))

  it.live("generateObject", () =>
    Effect.map(
      Effect.flip(against(
        (_request, response) => json(response, 200, completionWithCall("respond", echo)),
        LanguageModel.generateObject({ prompt: "Options", schema: Schema.Struct({ a: Schema.String }) })
      )),
      bounded
    ))

  it.live("generateObject: JSON nested 10,000 levels deep", () =>
    Effect.map(
      Effect.flip(against(
        (_request, response) =>
          json(response, 200, completionWithCall("respond", `{"a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`)),
        LanguageModel.generateObject({ prompt: "Options", schema: Schema.Struct({ a: Schema.Unknown }) })
      )),
      (error) => expect(error).toMatchObject({ _tag: "MalformedOutput", description: expect.stringContaining("deeper than") })
    ))
})

describe("streamText holds at most maxResponseBytes", () => {
  it.live("an endless stream ends typed at the limit, its connection closed", () => {
    let written = 0
    const piece = `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { content: "y".repeat(4096) } }] })}\n\n`
    const endless: Handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" })
      const next = () => {
        while (!response.destroyed && written < 64 * MiB) {
          written += piece.length
          if (!response.write(piece)) return response.once("drain", next)
        }
        response.end()
      }
      next()
    }
    return Effect.gen(function*() {
      const error = yield* Effect.flip(against(endless, Stream.runDrain(LanguageModel.streamText({ prompt: "Go on" })), MiB))
      expect(error._tag === "UnknownError" && error.cause).toMatchObject({ _tag: "ResponseTooLargeError", limit: MiB })
      expect(written).toBeGreaterThan(MiB)
      expect(written).toBeLessThan(64 * MiB)
    })
  })
})

describe("statuses: HttpResponseError with the status and the service's message", () => {
  for (const status of [401, 403, 404, 429, 500, 503]) {
    it.live(`${status}`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(against(
          (_request, response) => json(response, status, { error: { message: `refused ${status} for ${apiKey}`, type: "x" } }),
          LanguageModel.generateText({ prompt: "Hi" })
        ))
        expect(error._tag).toBe("HttpResponseError")
        if (error._tag !== "HttpResponseError") return
        expect(error.reason).toBe("StatusCode")
        expect(error.response.status).toBe(status)
        expect(error.message).toContain(`refused ${status}`)
        expect(error.message).not.toContain(apiKey)
        expect(error.request).toMatchObject({ method: "POST", url: expect.stringContaining("/chat/completions") })
      }))
  }

  it.live("streamText too", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(against(
        (_request, response) => json(response, 429, { error: { message: "slow down" } }),
        Stream.runDrain(LanguageModel.streamText({ prompt: "Hi" }))
      ))
      expect(error).toMatchObject({ _tag: "HttpResponseError", response: { status: 429 } })
    }))
})
