import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import * as EffectVersion from "../src/EffectVersion.js"

class Greeting extends Context.Service<Greeting, string>()("test/Greeting") {}

const guarded = EffectVersion.guard(Layer.succeed(Greeting, "hello"))

// A second copy of effect, as an application with two installs has: the
// package's files under another path are other modules to Node.
let copy: string
let SecondEffect: typeof Effect

beforeAll(async () => {
  const installed = dirname(createRequire(import.meta.url).resolve("effect/package.json"))
  copy = mkdtempSync(join(tmpdir(), "second-effect-"))
  // Under node_modules, so that Vitest leaves it to Node as it does the first.
  const target = join(copy, "node_modules", "effect")
  cpSync(installed, target, { recursive: true, filter: (source) => !source.endsWith(".d.ts") && !source.includes("/src") })
  SecondEffect = await import(pathToFileURL(join(target, "dist", "Effect.js")).href)
})

afterAll(() => rmSync(copy, { recursive: true, force: true }))

describe("EffectVersion", () => {
  it.effect("a guarded layer builds on the application's one copy of Effect 4.1", () =>
    Effect.gen(function*() {
      expect(yield* Greeting).toBe("hello")
    }).pipe(Effect.provide(guarded)))

  it("a second copy of Effect building the layer dies with the sentence", async () => {
    expect(SecondEffect.void).not.toBe(Effect.void)
    const program = SecondEffect.provide(SecondEffect.void, guarded as never)
    const exit: Exit.Exit<void> = await SecondEffect.runPromiseExit(program)
    expect(exit._tag).toBe("Failure")
    const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
    expect(defect).toBeInstanceOf(EffectVersion.EffectVersionError)
    expect(String(defect)).toContain("Switchboard needs effect 4.1 but found two copies of effect")
    expect(String(defect)).toContain("pnpm add effect@~4.1.0")
  })

  it("the sentence names the version found, the one needed and how to get it", () => {
    expect(EffectVersion.message("effect 3.21.2")).toMatch(
      /^Switchboard needs effect 4\.1 but found effect 3\.21\.2: install a single Effect 4\.1 with `pnpm add effect@~4\.1\.0`/
    )
  })
})
