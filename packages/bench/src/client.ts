/**
 * One client run, in its own process: `node dist/client.js '<ClientSpec JSON>'`.
 * Loads only the client it runs (the raw client's process never loads Effect),
 * samples its RSS every 10 ms, runs the workload and sends the result to its
 * parent over IPC.
 */
import type { ClientResult, ClientSpec, ClientToParent, Measured } from "./lib/ipc.js"

let sampledPeakRss = process.memoryUsage.rss()
const sampler = setInterval(() => {
  const rss = process.memoryUsage.rss()
  if (rss > sampledPeakRss) sampledPeakRss = rss
}, 10)
sampler.unref()

const run = async (spec: ClientSpec): Promise<Measured> => {
  switch (spec.workload) {
    case "chat": {
      switch (spec.client) {
        case "undici":
          return (await import("./clients/undici.js")).chat(spec)
        case "openai":
          return (await import("./clients/openai.js")).chat(spec)
        case "effect-http":
          return (await import("./clients/effectHttp.js")).chat(spec)
        case "switchboard":
        case "switchboard-forEach":
        case "switchboard-wire-undici":
        case "switchboard-wire-fetch":
          return (await import("./clients/switchboard.js")).chat(spec)
      }
      break
    }
    case "stream": {
      switch (spec.client) {
        case "undici-sse":
          return (await import("./clients/undici.js")).stream(spec)
        case "raw-stream":
        case "raw-stream-fold":
          return (await import("./clients/rawStream.js")).stream(spec)
        case "openai":
          return (await import("./clients/openai.js")).stream(spec)
        case "switchboard":
        case "switchboard-fold":
        case "switchboard-wire-undici":
        case "switchboard-wire-fetch":
          return (await import("./clients/switchboard.js")).stream(spec)
      }
      break
    }
    case "concurrent-streams": {
      switch (spec.client) {
        case "undici-sse":
          return (await import("./clients/undici.js")).concurrentStreams(spec)
        case "openai":
          return (await import("./clients/openai.js")).concurrentStreams(spec)
        case "switchboard":
          return (await import("./clients/switchboard.js")).concurrentStreams(spec)
      }
      break
    }
    case "embed":
      return (await import("./clients/switchboard.js")).embed(spec)
    case "agent":
      return (await import("./clients/agent.js")).run(spec)
    case "agent-load":
      switch (spec.client) {
        case "switchboard":
          return (await import("./clients/loadSwitchboard.js")).run(spec)
        case "ai":
          return (await import("./clients/loadAi.js")).run(spec)
        case "openai-agents":
          return (await import("./clients/loadAgents.js")).run(spec)
      }
      break
    case "serve":
      return (await import("./clients/serve.js")).run(spec)
  }
  throw new Error(`unknown client spec: ${JSON.stringify(spec)}`)
}

const finish = (result: ClientResult) => {
  const message: ClientToParent = { type: "result", result }
  if (process.send) process.send(message, () => process.exit(result.ok ? 0 : 1))
  else {
    console.log(JSON.stringify(result))
    process.exit(result.ok ? 0 : 1)
  }
}

const main = async () => {
  const spec = JSON.parse(process.argv[2] ?? "null") as ClientSpec
  try {
    const measured = await run(spec)
    const rss = process.memoryUsage.rss()
    finish({
      ok: true,
      ...measured,
      sampledPeakRss: Math.max(sampledPeakRss, rss),
      maxRss: process.resourceUsage().maxRSS * 1024
    })
  } catch (error) {
    finish({
      ok: false,
      error: error instanceof Error ? error.message : String(error)
    })
  }
}

void main()
