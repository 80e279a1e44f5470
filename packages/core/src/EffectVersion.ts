/**
 * Switchboard is built on Effect 4.1 and shares the application's copy of
 * `effect` (a peer dependency). An application that loads a second copy of
 * Effect, or another minor version, gets one sentence saying so when a
 * Switchboard layer is built, instead of an error from deep inside Effect
 * (a service that is never found, a fiber of the other copy).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Version from "effect/Version"

/**
 * The sentence an application on the wrong Effect gets.
 *
 * @since 0.1.0
 * @category errors
 */
export const message = (found: string): string =>
  `Switchboard needs effect 4.1 but found ${found}: ` +
  "install a single Effect 4.1 with `pnpm add effect@~4.1.0` (or `npm install effect@~4.1.0`) and check that `npm ls effect` shows one copy."

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

// The fiber class of this copy of Effect, found once, on the first check.
let ownFiber: unknown

/**
 * Dies with `EffectVersionError` unless the fiber running it belongs to this
 * copy of Effect and that copy is 4.1. It costs a property read and a
 * comparison.
 *
 * @since 0.1.0
 * @category checks
 */
export const check: Effect.Effect<void> = Effect.withFiber((fiber) => {
  const version = Version.getCurrentVersion()
  if (!version.startsWith("4.1.")) return Effect.die(new EffectVersionError(`effect ${version}`))
  ownFiber ??= Effect.runFork(Effect.void).constructor
  return fiber.constructor === ownFiber ? Effect.void : Effect.die(new EffectVersionError("two copies of effect"))
})

/**
 * `layer`, checked by `check` before it is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const guard = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> => Layer.unwrap(Effect.as(check, layer))
