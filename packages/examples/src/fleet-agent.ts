import { NodeSwitchboard } from "@switchboard/node"
import { AgentWorkflow, Cluster } from "@switchboard/workflow"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"

const toolkit = Toolkit.make(Tool.make("refund", {
  description: "Refunds an order",
  parameters: Schema.Struct({ order: Schema.String }),
  success: Schema.Struct({ refunded: Schema.Boolean }),
  needsApproval: true
}))

// Where approval requests go: in a real system, a message to a person.
const inbox = Effect.runSync(Queue.unbounded<AgentWorkflow.ApprovalRequest>())

const Assistant = AgentWorkflow.make({
  name: "Assistant",
  toolkit,
  maxSteps: 10,
  onApproval: (request) => Queue.offer(inbox, request), // once per pause, as an activity
  recheck: "1 second" // how often a paused run looks for its decisions, besides being woken
})

// A runner: the workflow, its tools' handlers and the SDK, state in sqlite.
const Runner = Assistant.layer.pipe(
  Layer.provide(toolkit.toLayer({ refund: () => Effect.succeed({ refunded: true }) })),
  Layer.provideMerge(Cluster.layerRunner({ database: { _tag: "Sqlite", filename: "agents.sqlite" } })),
  Layer.provide(NodeSwitchboard.layerConfig())
)

const program = Effect.gen(function*() {
  yield* Assistant.start("ticket-42", "gpt-4o-mini", [{ role: "user", content: `Use refund({"order": "A-17"})` }])
  // Later, anywhere (another process with an engine): someone decides.
  const { pending, token } = yield* Queue.take(inbox)
  yield* Console.log(`approve ${pending.map((call) => `${call.name}(${call.arguments})`).join(", ")}? yes`)
  yield* Assistant.decide(token, Object.fromEntries(pending.map((call) => [call.approvalId, "approve" as const])))
  // The run goes on from its pause; its result, by key, once complete.
  const result = yield* Assistant.result("ticket-42").pipe(
    Effect.flatMap((r) => (r?._tag === "Complete" ? Effect.succeed(r) : Effect.fail("not complete yet"))),
    Effect.retry(Schedule.spaced("500 millis"))
  )
  if (Exit.isSuccess(result.exit)) {
    yield* Console.log(result.exit.value.status, result.exit.value.transcript.map((m) => m.role).join(" → "))
  }
})

await program.pipe(Effect.provide(Runner), Effect.runPromise)
