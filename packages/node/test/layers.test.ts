/**
 * `NodeSwitchboard.layer` builds its own services wherever it is provided:
 * Effect 4 memoizes layers by reference across nested `Effect.provide`s, and
 * a second SDK layer (another key, another journal) must not get the first
 * one's. Across real HTTP to the emulator.
 */
import { describe, expect, it } from "@effect/vitest"
import { Models } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import { NodeSwitchboard } from "../src/index.js"

describe("NodeSwitchboard.layer inside another", () => {
  it.live("the inner layer's key is the one sent, the outer's calls keep theirs", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const inner = Effect.flip(Models.list).pipe(
        Effect.provide(NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: "sk-another-0123456789abcdef", maxRetries: 0 }))
      )
      const [error, models] = yield* Effect.all([inner, Models.list]).pipe(
        Effect.provide(NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
      )
      expect(error._tag).toBe("AuthenticationError")
      expect(models.map((m) => m.id)).toContain("gpt-4o-mini")
    }).pipe(Effect.provide(Emulator.layer())))
})
