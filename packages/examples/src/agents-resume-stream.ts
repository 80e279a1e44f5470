import { Agent } from "@switchboard/agent"
import { NodeSwitchboard } from "@switchboard/node"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const DeleteFile = Tool.make("delete_file", {
  description: "Deletes a file",
  parameters: Schema.Struct({ path: Schema.String.annotate({ description: "File path" }) }),
  success: Schema.Struct({ deleted: Schema.String }),
  needsApproval: true
})
const toolkit = Toolkit.make(DeleteFile)
const HandlersLive = toolkit.toLayer({ delete_file: ({ path }) => Effect.succeed({ deleted: path }) })

/** What the page would show: tool calls and results as they happen, text once a step ends. */
const show = (event: Agent.AgentEvent<undefined, typeof toolkit.tools>) => {
  switch (event._tag) {
    case "ToolCallStarted":
      return Console.log(`→ ${event.name}(${event.arguments})`)
    case "ToolResult":
      return Console.log(`← ${event.result.outcome}: ${event.result.content}`)
    case "StepFinished":
      return event.step.message.content ? Console.log(`model: ${event.step.message.content}`) : Effect.void
    default:
      return Effect.void
  }
}

const program = Effect.gen(function*() {
  const options = { model: "gpt-4o-mini", toolkit, budget: { totalTokens: 20_000 } }
  const messages = [{ role: "user" as const, content: `Use delete_file({"path": "/tmp/draft.txt"})` }]
  let result = yield* Agent.stream({ ...options, messages }).pipe(Agent.runForEach(show))
  while (result.status === "paused") {
    for (const call of result.pending) {
      // `params` is decoded and typed by the tool: here `{ readonly path: string }`.
      yield* Console.log(`approve ${call.name} of ${call.params.path}? yes`)
    }
    const decisions = Object.fromEntries(result.pending.map((call) => [call.approvalId, "approve" as const]))
    // The paused run streams on: its usage and budget carried, in its trace.
    result = yield* Agent.resumeStream({
      ...options,
      transcript: result.transcript,
      usage: result.usage,
      trace: result.trace,
      decisions
    }).pipe(Agent.runForEach(show))
  }
  yield* Console.log(`${result.status}: ${result.usage.total_tokens} tokens in all`)
})

await program.pipe(Effect.provide(Layer.merge(HandlersLive, NodeSwitchboard.layerConfig())), Effect.runPromise)
