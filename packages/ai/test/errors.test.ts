/**
 * One answer per question (issue 33): whether a failure is worth another
 * try is the Switchboard error's own `isRetryable`, and the `AiError` the
 * provider gives says the same, the service's `x-should-retry` included.
 * Over real HTTP: the emulator's status faults, with and without the header.
 */
import { describe, expect, it } from "@effect/vitest"
import { isTransient, isSwitchboardError } from "@switchboard/core/SwitchboardError"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SwitchboardLanguageModel } from "../src/index.js"

/** The SDK with no retries of its own: the failure of the first attempt comes back as it is. */
const once = Layer.unwrap(
  Effect.map(Emulator.Emulator, (emulator) => NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, maxRetries: 0 }))
).pipe(Layer.provideMerge(Emulator.layer()))

const cases: ReadonlyArray<{ readonly status: number; readonly shouldRetry?: boolean; readonly retryable: boolean }> = [
  { status: 409, retryable: true },
  { status: 409, shouldRetry: false, retryable: false },
  { status: 503, retryable: true },
  { status: 503, shouldRetry: false, retryable: false },
  { status: 429, shouldRetry: false, retryable: false },
  { status: 400, retryable: false },
  { status: 400, shouldRetry: true, retryable: true },
  { status: 404, shouldRetry: true, retryable: true }
]

describe("what a failure means, one answer", () => {
  for (const { retryable, shouldRetry, status } of cases) {
    const header = shouldRetry === undefined ? "no x-should-retry" : `x-should-retry: ${shouldRetry}`
    it.live(`${status} with ${header}: the AiError and the Switchboard error both say ${retryable ? "retryable" : "not retryable"}`, () =>
      Effect.gen(function*() {
        const emulator = yield* Emulator.Emulator
        yield* emulator.setFaults({ script: [{ _tag: "Status", status, ...(shouldRetry === undefined ? {} : { shouldRetry }) }] })
        const error = yield* Effect.flip(LanguageModel.generateText({ prompt: "Hello" }))
        const cause: unknown = "cause" in error.reason ? error.reason.cause : undefined
        expect(isSwitchboardError(cause), String(cause)).toBe(true)
        expect(isSwitchboardError(cause) && isTransient(cause)).toBe(retryable)
        expect(error.isRetryable, error.reason._tag).toBe(retryable)
      }).pipe(Effect.provide(SwitchboardLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(Layer.provideMerge(once)))))
  }
})
