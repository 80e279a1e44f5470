/**
 * `Agent.stream`'s steps against hostile streams over real HTTP (issue 26):
 * the streamed tool arguments get the protections of a whole reply — no
 * prototype from the model's JSON, bounded nesting, no echo of the key, a
 * bounded fold — and a tool name split across deltas is the tool's name.
 */
import { describe, expect, it } from "@effect/vitest"
import { NodeSwitchboard } from "@switchboard/node"
import { type Handler, serve } from "@switchboard/test-support/Hostile"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"
import { Agent } from "../src/index.js"

const apiKey = "sk-hostile-0123456789abcdef"

const Configure = Tool.make("configure", {
  description: "Sets options",
  parameters: Schema.Struct({ extra: Schema.Record(Schema.String, Schema.Unknown) }),
  success: Schema.String
})
const kit = Toolkit.make(Configure)

/** The first request streams one call of `name` with `args` (the name in two deltas); later ones answer "done". */
const service = (args: string): Handler => {
  let calls = 0
  return (_request, response: Http.ServerResponse) => {
    response.writeHead(200, { "content-type": "text/event-stream" })
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    response.end(
      calls++ === 0 ?
        chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "config" } }] }) +
          chunk({ tool_calls: [{ index: 0, function: { name: "ure", arguments: args } }] }) +
          chunk({}, "tool_calls") + "data: [DONE]\n\n" :
        chunk({ content: "done" }, "stop") + "data: [DONE]\n\n"
    )
  }
}

/** The first step's tool result, and what the handler saw, from `Agent.stream` over `service(args)`. */
const firstResult = (args: string) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<unknown>("not run")
    const live = kit.toLayer({
      configure: ({ extra }) =>
        Effect.as(Ref.set(seen, { isAdmin: (extra as { isAdmin?: unknown }).isAdmin, plain: Object.getPrototypeOf(extra) === Object.prototype }), "ok")
    })
    const events = yield* Effect.scoped(Effect.flatMap(serve(service(args)), (hostile) =>
      Stream.runCollect(Agent.stream({ model: "gpt-4o-mini", toolkit: kit, messages: [{ role: "user", content: "Configure" }] })).pipe(
        Effect.provide(Layer.merge(live, Layer.orDie(NodeSwitchboard.layer({ baseUrl: hostile.url, apiKey, maxRetries: 0 }))))
      )))
    const result = events.flatMap((e) => (e._tag === "ToolResult" ? [e.result] : []))[0]
    return { result, seen: yield* Ref.get(seen) }
  })

describe("Agent.stream: a streamed step's tool arguments", () => {
  it.live("the name split across deltas finds the tool; __proto__ never reaches the handler's prototype", () =>
    Effect.map(firstResult(`{"extra":{"__proto__":{"isAdmin":true},"a":1}}`), ({ result, seen }) => {
      expect(result).toMatchObject({ name: "configure", outcome: "success" })
      expect(seen).toEqual({ isAdmin: undefined, plain: true })
    }))

  it.live("nested 10,000 levels deep: invalid, no crash", () =>
    Effect.map(firstResult(`{"extra":${"[".repeat(10_000)}${"]".repeat(10_000)}}`), ({ result }) => {
      expect(result).toMatchObject({ outcome: "invalid-arguments", content: expect.stringContaining("deeper than 128 levels") })
    }))

  it.live("arguments that echo the key: the tool result quotes neither them nor the key, and stays short", () =>
    Effect.map(firstResult(`${apiKey} ${"x".repeat(5 * 1024 * 1024)}`), ({ result }) => {
      expect(result?.outcome).toBe("invalid-arguments")
      expect(result?.content).not.toContain(apiKey.slice(0, 10))
      expect(result?.content.length).toBeLessThan(300)
    }))
})
