/**
 * The run's `output` against a hostile reply, over real HTTP from a
 * `node:http` server: a value that does not decode fails as
 * `Chat.createObject`'s does, its text redacted and bounded.
 */
import { describe, expect, it } from "@effect/vitest"
import { NodeSwitchboard } from "@switchboard/node"
import { expectShownValue, json, serve } from "@switchboard/test-support/Hostile"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Util from "node:util"
import { Agent } from "../src/index.js"

const apiKey = "sk-hostile-0123456789abcdef"
const MiB = 1024 * 1024

/** The answer first ("done"), then, for the `output` step, `respond` (when given) or `content`. */
const service = (step: { readonly respond?: string; readonly content?: string }) => {
  let n = 0
  return serve((_request, response) => {
    const first = n++ === 0
    const message = first || step.respond === undefined
      ? { role: "assistant", content: first ? "done" : step.content ?? "" }
      : { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "respond", arguments: step.respond } }] }
    json(response, 200, { id: "x", choices: [{ index: 0, finish_reason: "stop", message }] })
  })
}

const run = (step: { readonly respond?: string; readonly content?: string }) =>
  Effect.scoped(Effect.gen(function*() {
    const hostile = yield* service(step)
    return yield* Effect.flip(
      Agent.run({ model: "gpt-4o-mini", toolkit: Toolkit.make(), output: Schema.Struct({ a: Schema.Number }), messages: [{ role: "user", content: "Hi" }] })
    ).pipe(Effect.provide(Layer.orDie(NodeSwitchboard.layer({ baseUrl: hostile.url, apiKey, maxRetries: 0 }))))
  }))

describe("output: a reply that is no value", () => {
  it.live("a value that does not decode, 1 MiB long, echoing the key: its text redacted, its first 4,000 characters", () =>
    Effect.gen(function*() {
      expectShownValue(yield* run({ respond: JSON.stringify({ a: apiKey, pad: "p".repeat(MiB) }) }), apiKey)
    }))

  it.live("no respond call, its content 1 MiB echoing the key: the same", () =>
    Effect.gen(function*() {
      const error = yield* run({ content: `${apiKey} ${"p".repeat(MiB)}` })
      expect(error).toMatchObject({ _tag: "StructuredOutputError", issue: "the reply has no respond call" })
      const { text } = error as { readonly text: string }
      expect(text.startsWith("[redacted] ppp")).toBe(true)
      expect(text.length).toBeLessThan(4100)
      expect(Util.inspect(error, { depth: 10 })).not.toContain(apiKey)
    }))
})
