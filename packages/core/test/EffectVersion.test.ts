import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { createRequire } from "node:module"
import * as EffectVersion from "../src/EffectVersion.js"

class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}

const guarded = EffectVersion.guard(Layer.succeed(Greeting, "hello"))

// effect ships CommonJS beside its ES modules: require() loads a second copy
// of the same version, as an application that mixes the two would.
const SecondEffect = createRequire(import.meta.url)("effect") as typeof import("effect")

describe("EffectVersion", () => {
  it.effect("a guarded layer builds on the application's one copy of Effect 3", () =>
    Effect.gen(function*() {
      expect(yield* Greeting).toBe("hello")
    }).pipe(Effect.provide(guarded)))

  it("a second copy of Effect building the layer dies with the sentence", async () => {
    const program = SecondEffect.Effect.provide(SecondEffect.Effect.void, guarded as never)
    const exit: Exit.Exit<void> = await SecondEffect.Effect.runPromiseExit(program)
    expect(exit._tag).toBe("Failure")
    const defect = Exit.isFailure(exit) ? SecondEffect.Cause.squash(exit.cause) : undefined
    expect(defect).toBeInstanceOf(EffectVersion.EffectVersionError)
    expect(String(defect)).toContain("Switchboard needs effect 3.x but found two copies of effect")
    expect(String(defect)).toContain("pnpm add effect@^3")
  })

  it("an Effect 4 runtime, which calls layer.build, gets the sentence", () => {
    const build = (guarded as unknown as { build: (memoMap: unknown, scope: unknown) => unknown }).build
    expect(() => build({}, {})).toThrow(/^Switchboard needs effect 3\.x but found Effect 4/)
  })
})
