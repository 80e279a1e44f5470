/**
 * The agent's path through core's one conversion of an `effect/ai` tool
 * (`@switchboard/core/internal/tool`): the same table `@switchboard/ai`'s
 * tests run (`@switchboard/test-support/ChatToolCases`), over HTTP to the
 * emulator. The agent has no default strictness of its own: its cases are
 * those with `strictByDefault: false`.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import { Emulator } from "@switchboard/emulator"
import { cases } from "@switchboard/test-support/ChatToolCases"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import { Agent } from "../src/index.js"
import { emulated } from "./fixtures.js"
import { model } from "./tools.js"

const sentTools = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) =>
  requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => (r.body as Protocol.ChatRequest).tools))

describe("an effect/ai tool as a chat tool, through Agent.run", () => {
  for (const c of cases.filter((c) => !c.strictByDefault)) {
    it.effect(c.name, () =>
      Effect.gen(function*() {
        const kit = Toolkit.make(c.tool)
        const toolkit = yield* kit.pipe(Effect.provide(kit.toLayer({ [c.tool.name]: () => Effect.succeed("ok") } as never)))
        const exit = yield* Effect.result(Agent.run({ model, toolkit, stopWhen: Agent.stepCountIs(1), messages: [{ role: "user", content: "Hi" }] }))
        if (c.outcome._tag === "Sent") {
          expect(exit._tag).toBe("Success")
          expect((yield* sentTools)[0]).toEqual([c.outcome.definition])
        } else {
          expect(exit._tag === "Failure" && exit.failure).toMatchObject({ _tag: "ConfigurationError", field: `toolkit.tools.${c.tool.name}` })
          expect(yield* sentTools).toEqual([])
        }
      }).pipe(Effect.provide(emulated())))
  }

  it.effect("a tool filed under another name than its own (calls are matched by name): refused, naming it", () =>
    Effect.gen(function*() {
      const [first] = cases
      const toolkit = { tools: { a: first!.tool, b: first!.tool }, handle: () => Effect.die("never called") }
      const error = yield* Effect.flip(Agent.run({ model, toolkit, messages: [{ role: "user", content: "Hi" }] }))
      expect(error).toMatchObject({ _tag: "ConfigurationError", field: "toolkit.tools.a" })
      expect(yield* sentTools).toEqual([])
    }).pipe(Effect.provide(emulated())))
})
