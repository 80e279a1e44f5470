/**
 * Agent step overhead. One step of `Agent.run` (stopped after it with
 * `stopWhen`): the model call, which answers with one call of each of the
 * three no-op tools, and the three tools run at once. Against it, the chat
 * call alone: the same request (messages and tool definitions) through
 * `Chat.create`, answered with the same tool calls.
 */
import { Agent } from "@switchboard/agent"
import { Chat } from "@switchboard/core"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import { apiKey, chatModel } from "../lib/fixtures.js"
import type { ClientSpec, Measured } from "../lib/ipc.js"
import { NodeSwitchboard } from "@switchboard/node"
import { baseUrl, deadline, measure, pool } from "./common.js"

type Spec<W extends ClientSpec["workload"]> = Extract<ClientSpec, { workload: W }>

const messages = [{ role: "user" as const, content: "Call every no-op tool once." }]

const setup = () => {
  const noop = <const Name extends string>(name: Name) =>
    Tool.make(name, {
      description: "Does nothing, at once.",
      parameters: Schema.Struct({ n: Schema.Finite.annotate({ description: "any number" }) }),
      success: Schema.Struct({ ok: Schema.Boolean })
    })
  const toolkit = Toolkit.make(noop("noop_0"), noop("noop_1"), noop("noop_2"))
  const done = () => Effect.succeed({ ok: true })
  // The request the agent sends: each tool as effect/ai's JSON Schema gives it.
  const definitions = Object.values(toolkit.tools).map((tool) => ({
    type: "function" as const,
    function: {
      name: tool.name,
      description: Tool.getDescription(tool) ?? "",
      parameters: Tool.getJsonSchema(tool) as Record<string, unknown>
    }
  }))
  return { toolkit, definitions, handlers: toolkit.toLayer({ noop_0: done, noop_1: done, noop_2: done }) }
}

export const run = async (spec: Spec<"agent">): Promise<Measured> => {
  const { definitions, handlers, toolkit } = setup()
  const runtime = ManagedRuntime.make(
    Layer.merge(NodeSwitchboard.layer({ baseUrl: baseUrl(spec.port), apiKey }), handlers)
  )
  const chatAlone = Effect.map(
    Chat.create({ model: chatModel, messages, tools: definitions }),
    (completion) => {
      if (completion.choices[0]?.message.tool_calls?.length !== spec.tools) throw new Error("expected tool calls")
    }
  )
  const agentStep = Effect.map(
    Agent.run({ model: chatModel, messages, toolkit, stopWhen: (steps) => steps.length >= 1 }),
    (result) => {
      const results = result.steps[0]?.toolResults ?? []
      if (results.length !== spec.tools || results.some((r) => r.outcome !== "success")) {
        throw new Error(`expected ${spec.tools} successful tool results, got ${JSON.stringify(results)}`)
      }
    }
  )
  const unit = spec.mode === "chat" ? chatAlone : agentStep
  try {
    const until = deadline(spec.timeLimitMs)
    const once = () => runtime.runPromise(unit)
    await pool(spec.warmup, spec.concurrency, until, once)
    return await measure(spec.count, () => pool(spec.count, spec.concurrency, until, once))
  } finally {
    await runtime.dispose()
  }
}
