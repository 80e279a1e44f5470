import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Agent } from "../src/index.js"
import { emulated, recordingSpans } from "./fixtures.js"
import { handlers, model, toolkit } from "./tools.js"

const user = (content: string): Protocol.Message => ({ role: "user", content })
const setup = Effect.provide(Layer.merge(emulated(), handlers()))
const recordedIds = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) => requests.map((r) => r.requestId))

describe("an agent run's metadata", () => {
  it.effect("each step carries the metadata of its own model call: the request id the emulator recorded", () =>
    Effect.gen(function*() {
      const result = yield* Agent.run({ model, toolkit, messages: [user("Use get_weather and get_time for Paris")] })
      expect(result.steps.length).toBe(2)
      expect(result.steps.map((step) => step.response?.requestId)).toEqual(yield* recordedIds)
      expect(result.steps.map((step) => step.response?.status)).toEqual([200, 200])
    }).pipe(setup))

  it.effect("the run's span says how it ended and its total usage: a paused run is paused, not merely OK", () =>
    Effect.gen(function*() {
      const { result, spans } = yield* recordingSpans(
        Agent.run({ name: "files", model, toolkit, messages: [user(`Use delete_file({"path": "/tmp/a.txt"})`)] })
      )
      expect(result._tag === "Success" && result.success.status).toBe("paused")
      const run = spans.find((s) => s.name === "invoke_agent files")!
      const usage = result._tag === "Success" ? result.success.usage : undefined
      expect(Object.fromEntries(run.attributes)).toMatchObject({
        "switchboard.agent.status": "paused",
        "switchboard.agent.steps": 1,
        "switchboard.agent.usage.input_tokens": usage?.prompt_tokens,
        "switchboard.agent.usage.output_tokens": usage?.completion_tokens,
        "switchboard.agent.usage.total_tokens": usage?.total_tokens
      })
      // Usage under gen_ai.* stays on the chat spans alone: backends add it up across a trace.
      expect(run.attributes.has("gen_ai.usage.input_tokens")).toBe(false)
    }).pipe(setup))
})
