import { describe, expect, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { inspect } from "node:util"
import * as SwitchboardConfig from "../src/SwitchboardConfig.js"

describe("SwitchboardConfig", () => {
  it.effect("appends /v1 once, whatever the base URL's form", () =>
    Effect.gen(function*() {
      for (const baseUrl of ["https://api.example.com", "https://api.example.com/", "https://api.example.com/v1/"]) {
        const config = yield* SwitchboardConfig.make({ baseUrl })
        expect(config.apiUrl).toBe("https://api.example.com/v1")
      }
    }))

  it.effect("rejects a base URL that is not http(s), naming the field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(SwitchboardConfig.make({ baseUrl: "api.example.com" }))
      expect(error).toMatchObject({ _tag: "ConfigurationError", field: "baseUrl" })
    }))

  it.effect("reads SWITCHBOARD_BASE_URL and SWITCHBOARD_API_KEY, keeping the key redacted", () =>
    Effect.gen(function*() {
      const config = yield* SwitchboardConfig.SwitchboardConfig
      expect(config.apiUrl).toBe("http://127.0.0.1:9/v1")
      const key = Option.getOrThrow(config.apiKey)
      expect(Redacted.value(key)).toBe("sk-env")
      expect(String(key)).not.toContain("sk-env")
      expect(JSON.stringify(config)).not.toContain("sk-env")
    }).pipe(
      Effect.provide(
        SwitchboardConfig.layerConfig().pipe(
          Layer.provide(
            ConfigProvider.layer(
              ConfigProvider.fromEnvRecord({ SWITCHBOARD_BASE_URL: "http://127.0.0.1:9", SWITCHBOARD_API_KEY: "sk-env" })
            )
          )
        )
      )
    ))

  it.effect("a missing SWITCHBOARD_API_KEY is a ConfigError saying, in one line, which variable is missing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.provide(
          SwitchboardConfig.SwitchboardConfig,
          SwitchboardConfig.layerConfig().pipe(
            Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({ SWITCHBOARD_BASE_URL: "http://x" })))
          )
        )
      )
      // One line naming the variable, printed or inspected; still Effect's ConfigError.
      expect(error).toBeInstanceOf(Config.ConfigError)
      expect(error._tag).toBe("ConfigError")
      expect(error.message).toBe("SWITCHBOARD_API_KEY is not set: the service's key (or give it in code to layer)")
      expect(inspect(error)).toBe(`ConfigError: ${error.message}`)
      expect(String(error)).not.toContain("<redacted>")
    }))
})

describe("SwitchboardConfig.duration, the one check of every duration option", () => {
  const refused: ReadonlyArray<unknown> = [NaN, -1, "-5 seconds", "10 minuts", "NaN seconds", "forever", { seconds: NaN }, { seconds: -1 }, [1, NaN], [-1, 0], -10n, null, true]
  for (const input of refused) {
    it(`refuses ${typeof input === "bigint" ? `${input}n` : JSON.stringify(input) ?? String(input)}, naming the field`, () => {
      const result = SwitchboardConfig.duration("deadline", input)
      expect(result._tag).toBe("Failure")
      expect(result._tag === "Failure" && result.failure).toMatchObject({ _tag: "ConfigurationError", field: "deadline" })
    })
  }

  it("takes what Effect reads as a duration of 0 or more, Infinity and nanoseconds included", () => {
    for (const input of [0, 250, "5 nanos", "10 minutes", Infinity, [1, 500], 10n, { seconds: 2 }]) {
      expect(SwitchboardConfig.duration("deadline", input)._tag, String(input)).toBe("Success")
    }
  })

  it("refuses a duration under the minimum asked", () => {
    const minimum = Duration.millis(100)
    expect(SwitchboardConfig.duration("pollInterval", "1 millis", minimum)._tag).toBe("Failure")
    expect(SwitchboardConfig.duration("pollInterval", "100 millis", minimum)._tag).toBe("Success")
  })
})
