/**
 * Switchboard is built on Effect 3 and shares the application's copy of
 * `effect` (a peer dependency). An application that runs Effect 4, or a second
 * copy of Effect, gets one sentence saying so when a Switchboard layer is
 * built, instead of an error from deep inside Effect such as
 * `self.build is not a function`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The sentence an application on the wrong Effect gets.
 *
 * @since 0.1.0
 * @category errors
 */
export const message = (found: string): string =>
  `Switchboard needs effect 3.x but found ${found}: ` +
  "install a single Effect 3 with `pnpm add effect@^3` (or `npm install effect@^3`) and check that `npm ls effect` shows one copy."

/**
 * A defect, not a typed error: no program can recover from running on the
 * wrong Effect.
 *
 * @since 0.1.0
 * @category errors
 */
export class EffectVersionError extends Error {
  constructor(found: string) {
    super(message(found))
    this.name = "EffectVersionError"
  }
}

/** Effect 3 marks every effect with the version of the copy that made it. */
const ownVersion = (): string => {
  const variance: unknown = (Effect.void as unknown as Record<symbol, unknown>)[Symbol.for("effect/Effect")]
  const version = typeof variance === "object" && variance !== null ? (variance as { _V?: unknown })._V : undefined
  return typeof version === "string" ? version : "an unknown version of effect"
}

// The fiber class of this copy of Effect, found once, on the first check.
let ownFiber: unknown

/**
 * Dies with `EffectVersionError` unless the fiber running it belongs to this
 * copy of Effect and that copy is 3.x. It costs a property read and a
 * comparison.
 *
 * @since 0.1.0
 * @category checks
 */
export const check: Effect.Effect<void> = Effect.withFiberRuntime((fiber) => {
  const version = ownVersion()
  if (!version.startsWith("3.")) return Effect.die(new EffectVersionError(`effect ${version}`))
  ownFiber ??= Effect.runFork(Effect.void).constructor
  return fiber.constructor === ownFiber ? Effect.void : Effect.die(new EffectVersionError("two copies of effect"))
})

/**
 * `layer`, checked by `check` before it is built. Effect 4 builds a layer by
 * calling its `build` method, which Effect 3 layers lack; the guarded layer
 * has one that throws `EffectVersionError`, so an Effect 4 runtime stops with
 * the sentence too.
 *
 * @since 0.1.0
 * @category layers
 */
export const guard = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> => {
  const guarded = Layer.unwrapEffect(Effect.as(check, layer))
  Object.defineProperty(guarded, "build", {
    value: () => {
      throw new EffectVersionError("Effect 4 or a second copy of effect")
    }
  })
  return guarded
}
