/**
 * Agent load, OpenAI's Agents SDK: an `Agent` with the two lookups as
 * `tool`s (zod parameters, as its docs write them), run by a `Runner` with
 * `maxTurns: 3` on the Chat Completions model of `OpenAIProvider` pointed at
 * the emulator, tracing off (it would export to OpenAI).
 */
import { Agent, Runner, setTracingDisabled, tool } from "@openai/agents-core"
import { OpenAIProvider } from "@openai/agents-openai"
import { z } from "zod"
import { apiKey, chatModel } from "../lib/fixtures.js"
import type { Measured } from "../lib/ipc.js"
import { baseUrl } from "./common.js"
import { type LoadSpec, loadRuns, prompt, steps, type Timeline, toolDescription } from "./load.js"

export const run = (spec: LoadSpec): Promise<Measured> => {
  setTracingDisabled(true)
  const modelProvider = new OpenAIProvider({ apiKey, baseURL: `${baseUrl(spec.port)}/v1`, useResponses: false })
  const runner = new Runner({ modelProvider, tracingDisabled: true })
  let line: Timeline | undefined
  const lookup = (index: 0 | 1, name: string) =>
    tool({
      name,
      description: toolDescription,
      parameters: z.object({ run: z.number().int().describe("the run's number") }),
      execute: ({ run }) => {
        line?.tool(index, run)
        return Promise.resolve({ ok: true })
      }
    })
  const agent = new Agent({ name: "bench", model: chatModel, tools: [lookup(0, "lookup_order"), lookup(1, "lookup_invoice")] })
  return loadRuns(spec, async (n, current) => {
    line = current
    const result = await runner.run(agent, prompt(n), { maxTurns: steps })
    if (result.rawResponses.length !== steps || typeof result.finalOutput !== "string" || result.finalOutput === "") {
      throw new Error(`run ${n}: ${result.rawResponses.length} model calls (expected ${steps}), output ${JSON.stringify(result.finalOutput)}`)
    }
  })
}
