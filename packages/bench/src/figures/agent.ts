/**
 * Agent step overhead: a step with 3 parallel no-op tools against the chat call alone.
 */
import { complete, type Context, effect3Client, type Figure, interleave, maxServerCores, type Verdict } from "../lib/figure.js"
import { mb, micros, num, range, ratio } from "../lib/stats.js"

const id = "agent-step"
const title = "Agent step overhead"
const tools = 3
/** Issue 38's target: an agent step within 1.3 × the CPU of the chat call it makes (the Effect 4 edition's was 1.5). */
const target = 1.3

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const { agent, timeLimitMs } = context.settings
    const method =
      `One step of \`Agent.run\` (ended after it by \`stopWhen: (steps) => steps.length >= 1\`): the model call, ` +
      `answered with one call of each of ${tools} no-op tools (\`Effect.succeed\`), and the ${tools} tools run at once ` +
      "(default concurrency 4), against the chat call alone: the same request (messages and tool definitions) through " +
      `\`Chat.create\`, answered with the same tool calls. ${num(agent.count)} of each per run at concurrency ` +
      `${agent.concurrency} (\`runtime.runPromise\` per unit), after ${num(agent.warmup)} warm-up, ${agent.rounds} ` +
      "interleaved rounds. Cost is client CPU per unit and wall time per unit (1 / throughput). The warm-up is long " +
      "because the JIT's work is CPU of the process too: a step's CPU per unit, in blocks of 2,000 from a fresh process, " +
      "settles only after about 14,000 steps (a chat call's after about 8,000), so a shorter warm-up measures the " +
      "compiler more than the path."
    const modes = [
      { label: "chat call alone", mode: "chat" as const },
      { label: `agent step, ${tools} parallel no-op tools`, mode: "agent-step" as const },
      { label: "Effect 3 edition: chat call alone", mode: "chat" as const, effect3: true },
      { label: `Effect 3 edition: agent step, ${tools} parallel no-op tools`, mode: "agent-step" as const, effect3: true }
    ]
    const stats = await interleave(
      context,
      modes.map(({ effect3, label, mode }) => {
        const spec = {
          workload: "agent",
          mode,
          port: context.server.port,
          count: agent.count,
          concurrency: agent.concurrency,
          warmup: agent.warmup,
          tools,
          timeLimitMs
        } as const
        return effect3 ? effect3Client(context, label, spec) : { label, spec }
      }),
      agent.rounds
    )
    const chat = stats.get(modes[0]!.label)
    const step = stats.get(modes[1]!.label)
    const rows = modes.map(({ effect3, label }) => {
      const s = stats.get(label)!
      // Each edition's step against its own chat call.
      const chat = stats.get(modes[effect3 ? 2 : 0]!.label)
      if (!complete(s)) return [label, `failed: ${s.error ?? "no run"}`, "", "", "", "", ""]
      return [
        label,
        num(s.rate.median),
        range(s.rate),
        micros(1e6 / s.rate.median),
        micros(s.cpuPerUnit.median),
        complete(chat) ? ratio(s.cpuPerUnit.median / chat.cpuPerUnit.median) : "–",
        mb(s.peakRss.median)
      ]
    })
    const ok = complete(chat) && complete(step)
    const verdicts: Array<Verdict> = [
      {
        target: `agent step: client CPU ≤ ${target} × the chat call alone`,
        measured: ok
          ? `${ratio(step.cpuPerUnit.median / chat.cpuPerUnit.median)} (${micros(step.cpuPerUnit.median)} vs ${micros(chat.cpuPerUnit.median)})`
          : (step?.error ?? chat?.error ?? "a run failed"),
        pass: ok && step.cpuPerUnit.median <= target * chat.cpuPerUnit.median
      }
    ]
    return {
      id,
      title,
      method,
      tables: [{
        table: {
          header: ["unit", "units/s (median)", "min–max", "time/unit", "CPU/unit", "CPU × its chat call", "peak RSS"],
          numeric: [1, 2, 3, 4, 5, 6],
          rows
        }
      }],
      verdicts,
      notes: [],
      serverCores: maxServerCores(stats.values())
    }
  }
}
