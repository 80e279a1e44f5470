import type * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/**
 * Reads `config` from the program's `ConfigProvider` or, when the program
 * gave none, from `process.env` as it is now. Effect 4 computes a
 * reference's default once per process, and the default provider is a copy
 * of the environment taken then: a later run with another environment
 * (a second example, a test) would read the first one's.
 */
export const fromEnvironment = <A>(config: Config.Config<A>): Effect.Effect<A, Config.ConfigError> =>
  Effect.withFiber((fiber) =>
    config.parse(
      Context.getOrUndefined(fiber.context, ConfigProvider.ConfigProvider) ?? ConfigProvider.fromEnv()
    )
  )
