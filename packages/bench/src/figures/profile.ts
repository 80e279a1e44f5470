/**
 * A CPU profile (`node --cpu-prof`) of Switchboard's non-streaming path: the
 * `runPromise` client of the non-streaming figure, in its own process.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { Context, Figure } from "../lib/figure.js"
import { benchDir } from "../lib/machine.js"
import { summarizeProfile } from "../lib/profile.js"
import { runClient } from "../lib/processes.js"
import { num } from "../lib/stats.js"

const id = "profile"
const title = "Profile of the non-streaming path"
const file = "switchboard-chat.cpuprofile"

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const { chat, profile, timeLimitMs } = context.settings
    const dir = path.join(benchDir, "profiles")
    fs.mkdirSync(dir, { recursive: true })
    fs.rmSync(path.join(dir, file), { force: true })
    const method =
      `\`node --cpu-prof\` on the Switchboard (runPromise) client: ${num(chat.warmup)} warm-up and ${num(profile.count)} ` +
      `timed requests at concurrency ${chat.concurrency}; the profile covers the whole process. Self time per ` +
      `frame, as a share of the busy (non-idle) samples. The profile is kept in \`packages/bench/profiles/${file}\` ` +
      "(not committed); open it in Chrome DevTools or VS Code."
    const { result } = await runClient(
      {
        workload: "chat",
        client: "switchboard",
        port: context.server.port,
        count: profile.count,
        concurrency: chat.concurrency,
        warmup: chat.warmup,
        timeLimitMs
      },
      context.server,
      { execArgv: ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-name", file] }
    )
    if (!result.ok || !fs.existsSync(path.join(dir, file))) {
      return {
        id,
        title,
        method,
        tables: [],
        verdicts: [],
        notes: [`The profiled run failed: ${result.ok ? "no profile was written" : result.error}`],
        serverCores: undefined
      }
    }
    const summary = summarizeProfile(path.join(dir, file), 20)
    const pct = (share: number) => `${(share * 100).toFixed(1)} %`
    return {
      id,
      title,
      method,
      tables: [
        {
          caption: `Top self-time frames (busy time ${num(summary.busyMs)} ms of ${num(summary.totalMs)} ms sampled)`,
          table: {
            header: ["#", "function", "where", "package", "self ms", "share"],
            numeric: [0, 4, 5],
            rows: summary.top.map((f, i) => [String(i + 1), f.name, f.where, f.group, num(f.selfMs), pct(f.share)])
          }
        },
        {
          caption: "Self time by package",
          table: {
            header: ["package", "self ms", "share"],
            numeric: [1, 2],
            rows: summary.groups.slice(0, 12).map((g) => [g.group, num(g.selfMs), pct(g.share)])
          }
        }
      ],
      verdicts: [],
      notes: [],
      serverCores: undefined
    }
  }
}
