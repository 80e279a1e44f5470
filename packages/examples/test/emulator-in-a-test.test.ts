import { expect, it } from "@effect/vitest"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"

it.effect("talks to the emulator", () =>
  Effect.gen(function*() {
    const emulator = yield* Emulator.Emulator          // url: "http://127.0.0.1:PORT", apiKey
    const response = yield* Effect.promise(() =>
      fetch(`${emulator.url}/v1/models`, { headers: { authorization: `Bearer ${emulator.apiKey}` } })
    )
    expect(response.status).toBe(200)
    expect(yield* emulator.requestCount).toBe(1)
  }).pipe(Effect.provide(Emulator.layer())))
