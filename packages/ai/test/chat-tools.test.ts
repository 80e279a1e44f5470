/**
 * `@switchboard/ai`'s path through core's one conversion of an `effect/ai`
 * tool (`@switchboard/core/internal/tool`): the same table the agent's tests
 * run (`@switchboard/test-support/ChatToolCases`), over HTTP to the emulator,
 * the caller's default strictness as `config.strict`.
 */
import { describe, expect, it } from "@effect/vitest"
import { cases } from "@switchboard/test-support/ChatToolCases"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SwitchboardLanguageModel } from "../src/index.js"
import { emulated, sentChatBodies } from "./fixtures.js"

const provide = Effect.provide(SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(Layer.provideMerge(emulated())))

describe("an effect/ai tool as a chat tool, through LanguageModel.generateText", () => {
  for (const c of cases) {
    it.effect(c.name, () =>
      Effect.gen(function*() {
        const kit = Toolkit.make(c.tool)
        const exit = yield* Effect.result(
          LanguageModel.generateText({ prompt: "Hi", toolkit: kit }).pipe(
            SwitchboardLanguageModel.withConfigOverride({ strict: c.strictByDefault }),
            Effect.provide(kit.toLayer({ [c.tool.name]: () => Effect.succeed("ok") } as never))
          )
        )
        const sent = yield* sentChatBodies
        if (c.outcome._tag === "Sent") {
          expect(exit._tag).toBe("Success")
          expect(sent[0]?.["tools"]).toEqual([c.outcome.definition])
        } else {
          const reason = c.outcome.kind === "schema" ? "UnsupportedSchemaError" : "InvalidRequestError"
          expect(exit._tag === "Failure" && exit.failure.reason._tag).toBe(reason)
          expect(sent).toEqual([])
        }
      }).pipe(provide))
  }
})
