/**
 * Agent load, Switchboard: `Agent.run` with a toolkit of the two lookups,
 * `maxSteps: 3`, each run its own `runtime.runPromise`.
 */
import { Agent } from "@switchboard/agent"
import { NodeSwitchboard } from "@switchboard/node"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import { apiKey, chatModel } from "../lib/fixtures.js"
import type { Measured } from "../lib/ipc.js"
import { baseUrl } from "./common.js"
import { type LoadSpec, loadRuns, prompt, steps, type Timeline, toolDescription, toolNames } from "./load.js"

const lookup = <const Name extends string>(name: Name) =>
  Tool.make(name, {
    description: toolDescription,
    parameters: Schema.Struct({ run: Schema.Int.annotate({ description: "the run's number" }) }),
    success: Schema.Struct({ ok: Schema.Boolean })
  })

const toolkit = Toolkit.make(lookup(toolNames[0]), lookup(toolNames[1]))

export const run = async (spec: LoadSpec): Promise<Measured> => {
  // The timeline of the current phase (warm-up, then the timed runs): the handlers are built once.
  let line: Timeline | undefined
  const mark = (index: 0 | 1) => ({ run }: { readonly run: number }) =>
    Effect.sync(() => {
      line?.tool(index, run)
      return { ok: true }
    })
  const handlers = toolkit.toLayer({ lookup_order: mark(0), lookup_invoice: mark(1) })
  const runtime = ManagedRuntime.make(Layer.merge(NodeSwitchboard.layer({ baseUrl: baseUrl(spec.port), apiKey }), handlers))
  try {
    return await loadRuns(spec, async (n, current) => {
      line = current
      const result = await runtime.runPromise(
        Agent.run({ model: chatModel, messages: [{ role: "user", content: prompt(n) }], toolkit, maxSteps: steps })
      )
      const failed = result.steps.some((step) => step.toolResults.some((r) => r.outcome !== "success"))
      if (result.steps.length !== steps || result.text === "" || failed) {
        throw new Error(`run ${n}: ${result.steps.length} steps (expected ${steps}), status ${result.status}`)
      }
    })
  } finally {
    await runtime.dispose()
  }
}
