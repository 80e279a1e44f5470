/**
 * Import costs, one step after another in one fresh process:
 * `node dist/cold/imports.js <specifier>…`. Each step is imported in turn
 * and costed as what it added: wall and CPU time, and RSS after it. A step
 * `@call <port>` builds `NodeSwitchboard.layer` and makes one `Chat.create`.
 * Prints one JSON line.
 */
import { performance } from "node:perf_hooks"

interface Step {
  readonly step: string
  readonly wallMs: number
  readonly cpuMs: number
  readonly rss: number
}

const call = async (port: string) => {
  const [{ Chat }, { NodeSwitchboard }, Effect, { apiKey, chatRequest }] = await Promise.all([
    import("@switchboard/core"),
    import("@switchboard/node"),
    import("effect/Effect"),
    import("../lib/fixtures.js")
  ])
  await Effect.runPromise(
    Effect.provide(Chat.create(chatRequest), NodeSwitchboard.layer({ baseUrl: `http://127.0.0.1:${port}`, apiKey }))
  )
}

const main = async () => {
  const steps: Array<Step> = []
  const args = process.argv.slice(2)
  for (let i = 0; i < args.length; i++) {
    const step = args[i]!
    const cpu = process.cpuUsage()
    const start = performance.now()
    if (step === "@call") await call(args[++i]!)
    else await import(step)
    const used = process.cpuUsage(cpu)
    steps.push({ step, wallMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000, rss: process.memoryUsage.rss() })
  }
  process.stdout.write(`${JSON.stringify({ startMs: performance.now() - steps.reduce((a, s) => a + s.wallMs, 0), steps })}\n`)
}

void main()
