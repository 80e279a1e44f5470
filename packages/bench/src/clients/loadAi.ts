/**
 * Agent load, Vercel `ai`: `generateText` with the two lookups as tools (zod
 * parameters, as its docs write them) and `stopWhen: stepCountIs(3)`,
 * through `@ai-sdk/openai-compatible` pointed at the emulator.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { generateText, stepCountIs, tool } from "ai"
import { z } from "zod"
import { apiKey, chatModel } from "../lib/fixtures.js"
import type { Measured } from "../lib/ipc.js"
import { baseUrl } from "./common.js"
import { type LoadSpec, loadRuns, prompt, steps, type Timeline, toolDescription } from "./load.js"

export const run = (spec: LoadSpec): Promise<Measured> => {
  const model = createOpenAICompatible({ name: "bench", baseURL: `${baseUrl(spec.port)}/v1`, apiKey })(chatModel)
  let line: Timeline | undefined
  const lookup = (index: 0 | 1) =>
    tool({
      description: toolDescription,
      inputSchema: z.object({ run: z.number().int().describe("the run's number") }),
      execute: async ({ run }) => {
        line?.tool(index, run)
        return { ok: true }
      }
    })
  const tools = { lookup_order: lookup(0), lookup_invoice: lookup(1) }
  return loadRuns(spec, async (n, current) => {
    line = current
    const result = await generateText({ model, tools, prompt: prompt(n), stopWhen: stepCountIs(steps) })
    const failed = result.steps.some((step) => step.content.some((part) => part.type === "tool-error"))
    if (result.steps.length !== steps || result.text === "" || failed) {
      throw new Error(`run ${n}: ${result.steps.length} steps (expected ${steps}), finish ${result.finishReason}`)
    }
  })
}
