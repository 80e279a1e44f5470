import { describe, expect, it } from "@effect/vitest"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import { Reply, ScriptedModel, TestTime } from "@switchboard/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { assistant, toolkit } from "../src/testing-agent.js"

// The handlers a test gives the program: fixed answers, and a record of what ran.
const sent: Array<string> = []
const handlers = toolkit.toLayer({
  get_weather: ({ city }) => Effect.succeed({ city, celsius: 18 }),
  send_email: ({ to }) => Effect.sync(() => (sent.push(to), { sent: true }))
})
const approveAll = (pending: ReadonlyArray<{ readonly approvalId: string }>) =>
  Effect.succeed(Object.fromEntries(pending.map((call) => [call.approvalId, "approve" as const])))

describe("the assistant, scripted (offline)", () => {
  it.effect("checks the weather, asks to send the email, sends it once approved", () =>
    // TestTime.run moves the TestClock through the retry's backoff: no hang.
    TestTime.run(Effect.gen(function*() {
      const answer = yield* assistant("Weather in Paris? Then email it to Ana.", approveAll)
      expect(answer).toBe("Sent Ana the weather: 18 °C in Paris.")
      expect(sent).toEqual(["ana@example.com"])
      const calls = yield* ScriptedModel.calls
      expect(calls.at(-1)?.chat?.messages.at(-1)).toMatchObject({ role: "tool", content: `{"sent":true}` })
      expect(yield* TestTime.slept).toEqual([1000]) // the 503's retry-after
      yield* ScriptedModel.assertComplete
    })).pipe(
      Effect.provide(handlers),
      Effect.provide(ScriptedModel.layer([
        Reply.toolCall("get_weather", { city: "Paris" }),
        Reply.error(503, { headers: { "retry-after": "1" } }), // the service stumbles once
        Reply.toolCall("send_email", { to: "ana@example.com", body: "18 °C in Paris" }),
        Reply.text("Sent Ana the weather: 18 °C in Paris.")
      ]))
    ))

  it.effect("a denied email is not sent, and the model is told", () =>
    Effect.gen(function*() {
      const denyAll = (pending: ReadonlyArray<{ readonly approvalId: string }>) =>
        Effect.succeed(Object.fromEntries(pending.map((call) => [call.approvalId, "deny" as const])))
      const answer = yield* assistant("Email Ana", denyAll)
      expect(answer).toBe("I did not send it.")
      const calls = yield* ScriptedModel.calls
      expect(JSON.stringify(calls.at(-1)?.chat?.messages.at(-1))).toContain("denied")
    }).pipe(
      Effect.provide(handlers),
      Effect.provide(ScriptedModel.layer([
        Reply.toolCall("send_email", { to: "ana@example.com", body: "hello" }),
        Reply.text("I did not send it.")
      ]))
    ))
})

describe("the assistant, against the emulator", () => {
  // provideMerge keeps the Emulator service in reach of the test: its recorded requests.
  const emulated = Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) => NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
  ).pipe(Layer.provideMerge(Emulator.layer()))

  it.live("runs both tools over real HTTP", () =>
    Effect.gen(function*() {
      const question = `Use get_weather({"city": "Paris"}) then send_email({"to": "ana@example.com", "body": "18"})`
      const answer = yield* assistant(question, approveAll)
      expect(answer).toContain(`send_email → {"sent":true}`)
      const requests = yield* Effect.flatMap(Emulator.Emulator, (emulator) => emulator.requests)
      expect(requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(3)
    }).pipe(Effect.provide(handlers), Effect.provide(emulated)))
})
