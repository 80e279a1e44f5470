/**
 * `pnpm bench [--quick] [--only id,id] [--no-write]`: starts the loopback
 * server, runs every figure, prints the tables and regenerates
 * docs/performance.md, keeping the sections measured by their own commands
 * (`lib/sections.ts`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { analysis, design } from "./analysis.js"
import * as Agent from "./figures/agent.js"
import * as BrowserBundle from "./figures/browserBundle.js"
import * as CliStart from "./figures/cliStart.js"
import * as ColdStart from "./figures/coldStart.js"
import * as EmbedMany from "./figures/embedMany.js"
import * as Fleet from "./figures/fleet.js"
import * as Load from "./figures/load.js"
import * as Memory from "./figures/memory.js"
import * as Metadata from "./figures/metadata.js"
import * as NonStreaming from "./figures/nonStreaming.js"
import * as OpenStreams from "./figures/openStreams.js"
import * as Profile from "./figures/profile.js"
import * as Rss from "./figures/rss.js"
import * as Serve from "./figures/serve.js"
import * as Streaming from "./figures/streaming.js"
import * as Tricks from "./figures/tricks.js"
import type { Context, Figure, FigureResult, Settings } from "./lib/figure.js"
import { machine, rootDir } from "./lib/machine.js"
import { startServer, stopAll } from "./lib/processes.js"
import { consoleFigure, markdown, summaryTable } from "./lib/report.js"
import { keepOwnSections } from "./lib/sections.js"
import { textTable } from "./lib/stats.js"

const figures: ReadonlyArray<Figure> = [
  ColdStart.figure,
  CliStart.figure,
  NonStreaming.figure,
  Metadata.figure,
  Rss.figure,
  EmbedMany.figure,
  Streaming.figure,
  Memory.figure,
  OpenStreams.figure,
  Agent.figure,
  Load.figure,
  Serve.figure,
  BrowserBundle.figure,
  Tricks.figure,
  Profile.figure,
  Fleet.figure
]

const full: Settings = {
  quick: false,
  chat: { count: 20_000, concurrency: 32, warmup: 1_000, rounds: 3 },
  // 20 warm-up streams (of up to 2,000 chunks): with 2, a fifth of the CPU measured was V8 still compiling
  // the clients' code, on threads a profile of the main thread does not show (docs/decisions.md, issue 38).
  stream: { streams: 20, chunks: 5_000, warmupStreams: 20, rounds: 5 },
  memory: { small: 10_000, large: 1_000_000, rounds: 2 },
  openStreams: { streams: 1_000, chunks: 200, warmupStreams: 20, rounds: 5 },
  embed: { inputs: 20_000, rounds: 3 },
  agent: { count: 6_000, concurrency: 32, warmup: 16_000, rounds: 3 },
  load: { runs: 2_000, warmupRuns: 200, rounds: 3 },
  profile: { count: 20_000 },
  cold: { rounds: 9 },
  timeLimitMs: 120_000
}

const quick: Settings = {
  quick: true,
  chat: { count: 2_000, concurrency: 32, warmup: 200, rounds: 2 },
  stream: { streams: 5, chunks: 1_000, warmupStreams: 20, rounds: 2 },
  memory: { small: 10_000, large: 100_000, rounds: 1 },
  openStreams: { streams: 1_000, chunks: 200, warmupStreams: 20, rounds: 2 },
  embed: { inputs: 2_000, rounds: 2 },
  agent: { count: 1_000, concurrency: 32, warmup: 1_000, rounds: 2 },
  load: { runs: 200, warmupRuns: 50, rounds: 2 },
  profile: { count: 2_000 },
  cold: { rounds: 3 },
  timeLimitMs: 30_000
}

const usage = "usage: pnpm bench [--quick] [--only <figure id>,…] [--no-write]"

const parse = (args: ReadonlyArray<string>) => {
  let isQuick = false
  let write = true
  let only: ReadonlyArray<string> | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--quick") isQuick = true
    else if (arg === "--no-write") write = false
    else if (arg === "--only") only = (args[++i] ?? "").split(",").filter((s) => s !== "")
    else if (arg.startsWith("--only=")) only = arg.slice("--only=".length).split(",").filter((s) => s !== "")
    else if (arg === "--help" || arg === "-h") {
      console.log(`${usage}\nfigures: ${figures.map((f) => f.id).join(", ")}`)
      process.exit(0)
    } else if (arg !== "--") {
      console.error(`unknown argument ${arg}\n${usage}`)
      process.exit(2)
    }
  }
  const unknown = only?.filter((id) => !figures.some((f) => f.id === id)) ?? []
  if (unknown.length > 0) {
    console.error(`unknown figure ${unknown.join(", ")}; figures: ${figures.map((f) => f.id).join(", ")}`)
    process.exit(2)
  }
  return { settings: isQuick ? quick : full, write: write && only === undefined, only }
}

/** How this run was started, as a user would type it. */
const commandOf = (args: ReadonlyArray<string>) => {
  const shown = args.filter((a) => a !== "--").join(" ")
  return process.env["npm_lifecycle_event"] === "bench"
    ? `pnpm bench${shown ? ` ${shown}` : ""}`
    : `node packages/bench/dist/main.js${shown ? ` ${shown}` : ""}`
}

const main = async () => {
  const args = process.argv.slice(2)
  const { only, settings, write } = parse(args)
  const started = performance.now()
  const server = await startServer()
  const serverStart = await server.cpu()
  console.log(`bench: ${settings.quick ? "quick" : "full"} run, server pid ${server.pid} on 127.0.0.1:${server.port}`)
  const results: Array<FigureResult> = []
  const byId = new Map<string, FigureResult>()
  const context: Context = { server, settings, results: byId, log: (line) => console.log(line) }
  try {
    for (const figure of figures) {
      if (only !== undefined && !only.includes(figure.id)) continue
      console.log(`\n-- ${figure.title} (${figure.id})`)
      const loadBefore = os.loadavg()[0]!
      const result = { ...(await figure.run(context)), load: [loadBefore, os.loadavg()[0]!] as const }
      results.push(result)
      byId.set(result.id, result)
      console.log(consoleFigure(result))
    }
  } finally {
    const serverEnd = await server.cpu()
    const wallSeconds = (performance.now() - started) / 1000
    await server.stop()
    stopAll()
    const serverTotal = {
      cpuSeconds: (serverEnd.user - serverStart.user + serverEnd.system - serverStart.system) / 1e6,
      wallSeconds
    }
    console.log(`\n== Summary (${wallSeconds.toFixed(0)} s)\n${textTable(summaryTable(results))}`)
    if (write && results.length > 0) {
      const file = path.join(rootDir, "docs", "performance.md")
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const previous = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
      const page = markdown({ analysis, design, command: commandOf(args), machine: machine(), results, serverTotal, settings })
      const { missing, text } = keepOwnSections(previous, page)
      fs.writeFileSync(file, text)
      console.log(`\nwrote ${path.relative(rootDir, file)}`)
      for (const own of missing) console.log(`it has no section "${own.title.slice(3)}": \`${own.command}\` writes it`)
    } else if (!write) {
      console.log("\ndocs/performance.md not written (--no-write or --only)")
    }
  }
}

process.on("SIGINT", () => {
  stopAll()
  process.exit(130)
})

main().catch((error) => {
  console.error(error)
  stopAll()
  process.exit(1)
})
