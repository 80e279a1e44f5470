/**
 * The command line's start: `switchboard models` against the loopback server,
 * a whole process each time, and `switchboard --version` (no request) for
 * what parsing the command line costs.
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { effect3, isBuilt } from "../lib/effect3.js"
import type { Context, Figure } from "../lib/figure.js"
import { rootDir } from "../lib/machine.js"
import { mb, num, range } from "../lib/stats.js"
import { completeRuns, interleaveScripts } from "../lib/wholeProcess.js"
import { apiKey } from "../lib/fixtures.js"

const id = "cli-start"
const title = "The CLI's start"
/** Issue 38's target (the Effect 4 edition's was 300 ms). */
const targetMs = 150

// The launcher users run (it starts the bundled build, dist/bundle/bin.js).
const bin = path.join(rootDir, "packages", "cli", "bin", "switchboard.js")
const report = pathToFileURL(path.join(rootDir, "packages", "bench", "dist", "cold", "report.js")).href

// The unbundled build, as it ran before the bundle (and still runs `worker`
// and `--database`): the same program, about 650 modules, no V8 flag.
const unbundled = path.join(rootDir, "packages", "cli", "dist", "bin.js")

// The launcher keeps V8's code cache on disk (Node's compile cache): a run
// with it turned off is what the first command after an install pays.
const noCache = { NODE_DISABLE_COMPILE_CACHE: "1" }

interface Command {
  readonly label: string
  readonly bin: string
  readonly args: ReadonlyArray<string>
  readonly what: string
  readonly env?: NodeJS.ProcessEnv
}

const commands: ReadonlyArray<Command> = [
  { label: "switchboard models", bin, args: ["models"], what: "lists the models: one `GET /v1/models`, a table on stdout" },
  {
    label: "models, no compile cache",
    bin,
    args: ["models"],
    what: "the same with `NODE_DISABLE_COMPILE_CACHE=1`: the first run after an install (no verdict)",
    env: noCache
  },
  { label: "switchboard --version", bin, args: ["--version"], what: "prints the version, no request" },
  { label: "models, unbundled", bin: unbundled, args: ["models"], what: "the same through `dist/bin.js` (no verdict)" }
]

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const rounds = context.settings.cold.rounds
    const method =
      `\`node packages/cli/dist/bin.js <command>\` with \`SWITCHBOARD_BASE_URL\` set to the loopback server, a fresh ` +
      `process each run, ${rounds} interleaved rounds; wall time from spawn to exit. Peak RSS is written as the ` +
      "process exits by a module preloaded with `--import` (the same one the cold-start scripts use)."
    const env = { ...process.env, SWITCHBOARD_BASE_URL: `http://127.0.0.1:${context.server.port}`, SWITCHBOARD_API_KEY: apiKey }
    const edition = effect3(context.log)
    const effect3Models: Command = {
      label: "models, Effect 3 edition",
      bin: isBuilt(edition) ? path.join(edition.dir, "packages", "cli", "bin", "switchboard.js") : "",
      args: ["models"],
      what: `the same command at \`2ccd179\` (bundled too), no verdict${isBuilt(edition) ? "" : `: ${edition.error}`}`
    }
    const all = [...commands, effect3Models]
    const stats = await interleaveScripts(
      all.flatMap((command) =>
        command.bin === ""
          ? []
          : [{ label: command.label, args: ["--import", report, command.bin, ...command.args], env: { ...env, ...command.env } }]
      ),
      rounds,
      { timeLimitMs: 30_000, log: context.log }
    )
    const models = stats.get(commands[0]!.label)
    const rows = all.map(({ label, what }) => {
      const s = stats.get(label)
      if (!completeRuns(s)) return [label, what, `failed: ${s?.error ?? "no run"}`, "", "", ""]
      return [label, what, `${num(s.wallMs.median)} ms`, range(s.wallMs), `${num(s.cpuMs.median)} ms`, mb(s.maxRss.median)]
    })
    const ok = completeRuns(models)
    return {
      id,
      title,
      method,
      tables: [{ table: { header: ["command", "what", "wall (median)", "min–max", "CPU", "peak RSS"], numeric: [2, 3, 4, 5], rows } }],
      verdicts: [{
        target: `\`switchboard models\` wall time ≤ ${targetMs} ms`,
        measured: ok ? `${num(models.wallMs.median)} ms` : (models?.error ?? "a run failed"),
        pass: ok && models.wallMs.median <= targetMs
      }],
      notes: [],
      serverCores: undefined
    }
  }
}
