import { Agent } from "@switchboard/agent"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

// The program under test: a two-step tool agent whose email needs approval.
export const GetWeather = Tool.make("get_weather", {
  description: "Current temperature in a city",
  parameters: Schema.Struct({ city: Schema.String.annotate({ description: "City name" }) }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite })
})

export const SendEmail = Tool.make("send_email", {
  description: "Sends an email",
  parameters: Schema.Struct({ to: Schema.String, body: Schema.String }),
  success: Schema.Struct({ sent: Schema.Boolean }),
  needsApproval: true
})

export const toolkit = Toolkit.make(GetWeather, SendEmail)

/** Runs the agent; each pause asks `approve`, then the run goes on. */
export const assistant = (
  question: string,
  approve: (pending: ReadonlyArray<Agent.PendingApproval>) => Effect.Effect<Readonly<Record<string, Agent.Decision>>>
) =>
  Effect.gen(function*() {
    const options = { model: "gpt-4o-mini", toolkit, maxSteps: 6 }
    let result = yield* Agent.run({ ...options, messages: [{ role: "user", content: question }] })
    while (result.status === "paused") {
      const decisions = yield* approve(result.pending)
      result = yield* Agent.resume({ ...options, transcript: result.transcript, decisions })
    }
    return result.text
  })
