import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Emulator from "../src/Emulator.js"
import * as Protocol from "@switchboard/core/Protocol"
import { call, decode, errorOf } from "./utils.js"

const run = Effect.provide(Emulator.layer())

const moderate = (input: unknown) => call("/v1/moderations", { body: { input } })

describe("moderation", () => {
  it.effect("flags by keyword rules and scores grow with hits", () =>
    Effect.gen(function*() {
      const reply = yield* moderate(["I will attack and kill them", "you idiot", "Lovely weather for a picnic"])
      expect(reply.status).toBe(200)
      const body = decode(Protocol.ModerationResponse, reply)
      expect(body.model).toBe("omni-moderation-latest")
      expect(body.id).toMatch(/^modr-/)
      const [violent, rude, neutral] = body.results as [Protocol.ModerationResult, Protocol.ModerationResult, Protocol.ModerationResult]
      expect(violent.flagged).toBe(true)
      expect(violent.categories?.["violence"]).toBe(true)
      expect(violent.category_scores["violence"]).toBeCloseTo(0.8)
      expect(violent.categories?.["harassment"]).toBe(false)
      expect(rude.flagged).toBe(true)
      expect(rude.category_scores["harassment"]).toBeCloseTo(0.6)
      expect(neutral.flagged).toBe(false)
      expect(Object.values(neutral.category_scores).every((s) => s < 0.1)).toBe(true)
      expect(Object.keys(neutral.categories ?? {})).toEqual(["harassment", "hate", "illicit", "self-harm", "sexual", "violence"])
    }).pipe(run))

  it.effect("matches whole-word prefixes only and checks the model", () =>
    Effect.gen(function*() {
      const skill = yield* moderate("What a skill, the attacker attacked")
      expect(decode(Protocol.ModerationResponse, skill).results[0]!.category_scores["violence"]).toBeCloseTo(0.8)
      const wrong = yield* call("/v1/moderations", { body: { input: "x", model: "gpt-4o" } })
      expect(wrong.status).toBe(400)
      expect(errorOf(wrong).param).toBe("model")
    }).pipe(run))
})
