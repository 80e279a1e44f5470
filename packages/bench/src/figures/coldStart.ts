/**
 * Cold start: a whole process that imports a client, makes one chat call
 * against the loopback server and exits, against the official client, raw
 * undici, `effect` alone and Node alone.
 */
import { fileURLToPath } from "node:url"
import { loadEsbuild } from "../bundle-size.js"
import type { Context, Figure, Verdict } from "../lib/figure.js"
import { effect3, isBuilt } from "../lib/effect3.js"
import { runScript } from "../lib/processes.js"
import { mb, median, num, range, ratio, type Table } from "../lib/stats.js"
import { completeRuns, interleaveScripts } from "../lib/wholeProcess.js"

const id = "cold-start"
const title = "Cold start"

const script = (name: string) => fileURLToPath(new URL(`../cold/${name}.js`, import.meta.url))
const bundled = (name: string) => fileURLToPath(new URL(`../cold/${name}.bundled.mjs`, import.meta.url))

/**
 * An application bundled for deployment (a serverless function, a CLI): the
 * same script through esbuild, one file, Node platform. undici stays
 * external: @switchboard/node loads its `Agent` with `createRequire`, which
 * esbuild does not follow.
 */
const bundle = async (entry: string, outfile: string): Promise<void> => {
  const esbuild = await loadEsbuild()
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minifyWhitespace: true,
    minifySyntax: true,
    external: ["undici"],
    banner: { js: "import { createRequire as __require } from \"node:module\"; const require = __require(import.meta.url);" },
    logLevel: "error"
  })
}

const scripts: ReadonlyArray<{ readonly label: string; readonly name: string; readonly what: string }> = [
  { label: "Node alone", name: "node", what: "start and exit (the floor under every row)" },
  { label: "effect alone", name: "effect", what: "`import * as Effect from \"effect/Effect\"`, `Effect.runPromise(Effect.succeed(1))`, no request" },
  { label: "raw undici", name: "undici", what: "`undici.request` + `JSON.parse`" },
  { label: "openai", name: "openai", what: "`new OpenAI(…)`, one `chat.completions.create`" },
  {
    label: "Switchboard",
    name: "switchboard",
    what: "imports as the README (`@switchboard/core`, `@switchboard/node`, `effect/Effect`), `NodeSwitchboard.layer`, one `Chat.create`"
  },
  {
    label: "Switchboard (module imports)",
    name: "switchboardModules",
    what: "the same through `@switchboard/core/Chat`, `@switchboard/node/NodeSwitchboard`, `effect/Effect`"
  }
]

/** The Effect 3 edition's own scripts (`lib/effect3.ts`): the same program on effect 3.22, imports as its README. */
const effect3Scripts: ReadonlyArray<{ readonly label: string; readonly name: string; readonly what: string }> = [
  {
    label: "Effect 3 edition",
    name: "switchboard",
    what: "the Switchboard script at `2ccd179` (`@switchboard/core`, `@switchboard/node`, `effect`), effect 3.22"
  },
  {
    label: "Effect 3 edition (module imports)",
    name: "switchboardModules",
    what: "the module-imports script at `2ccd179`"
  }
]

/** The same scripts bundled by the application (`bundle`), for the rows below. */
const bundledScripts: ReadonlyArray<{ readonly label: string; readonly name: string; readonly what: string; readonly effect3?: true }> = [
  { label: "openai, bundled", name: "openai", what: "the openai script bundled with esbuild into one file" },
  { label: "Switchboard, bundled", name: "switchboard", what: "the Switchboard script bundled with esbuild into one file" },
  { label: "Effect 3 edition, bundled", name: "switchboard", what: "the Effect 3 edition's script bundled the same way", effect3: true }
]

/** The steps of the breakdown: each imported after the ones before it, then the layer and one call. */
const steps = [
  { step: "effect/Effect", what: "the runtime" },
  { step: "effect/Schema", what: "`Schema` (no `fast-check` in Effect 4: it moved to `effect/testing`)" },
  { step: "effect/Stream", what: "streams and channels" },
  { step: "@switchboard/core", what: "every capability, its schema values built (parsers compile at their first call)" },
  { step: "@switchboard/node/NodeSwitchboard", what: "the Node layer: undici's `Agent` (the file system loads with a file journal only)" },
  { step: "@switchboard/node", what: "the rest of the index: attachments, media" },
  { step: "@call", what: "`NodeSwitchboard.layer` built, one `Chat.create`" }
]

interface StepRun {
  readonly step: string
  readonly wallMs: number
  readonly cpuMs: number
  readonly rss: number
}

/** `cold/imports.js` run `rounds` times: the median cost of each step. */
const breakdown = async (context: Context, rounds: number): Promise<Table | string> => {
  const args = [script("imports"), ...steps.flatMap(({ step }) => (step === "@call" ? ["@call", String(context.server.port)] : [step]))]
  const runs: Array<ReadonlyArray<StepRun>> = []
  for (let i = 0; i < rounds; i++) {
    const run = await runScript(args, { timeLimitMs: 30_000 })
    if (run.exitCode !== 0) return `the breakdown failed: ${run.stderr.trim().split("\n").slice(-2).join(" ")}`
    runs.push((JSON.parse(run.stdout.trim().split("\n").pop()!) as { steps: ReadonlyArray<StepRun> }).steps)
  }
  return {
    header: ["step", "what it adds", "CPU (median)", "wall (median)", "RSS after"],
    numeric: [2, 3, 4],
    rows: steps.map(({ step, what }, i) => [
      step === "@call" ? "layer + one call" : `\`${step}\``,
      what,
      `${num(median(runs.map((r) => r[i]!.cpuMs)))} ms`,
      `${num(median(runs.map((r) => r[i]!.wallMs)))} ms`,
      mb(median(runs.map((r) => r[i]!.rss)))
    ])
  }
}

/** The Effect 4 edition's targets, on Node 22. */
const wallTarget = 1.5
const rssTarget = 1.2

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const rounds = context.settings.cold.rounds
    const method =
      `Each run is a fresh \`node\` process (no IPC channel) that imports its client, makes one non-streaming chat call ` +
      `to the loopback server and exits on its own (Switchboard's layer scope closes its connection pool). ` +
      `${rounds} interleaved rounds; medians and min–max. Wall time is from spawn to exit as the parent sees it; ` +
      "peak RSS is the process's `maxRSS`, written by the process as it exits; \"imports\" is when the script's " +
      "imports were done, by the process's own clock (from its start); CPU is the process's user + system time over " +
      "its life, steadier than wall time when other processes compete for the cores."
    const edition = effect3(context.log)
    const effect3Script = (name: string) => (isBuilt(edition) ? edition.bench(`cold/${name}.js`) : undefined)
    const port = String(context.server.port)
    const bundledRuns = []
    for (const { effect3, label, name } of bundledScripts) {
      const entry = effect3 ? effect3Script(name) : script(name)
      const outfile = bundled(effect3 ? `effect3-${name}` : name)
      if (entry === undefined) continue
      await bundle(entry, outfile)
      bundledRuns.push({ label, args: [outfile, port] })
    }
    const stats = await interleaveScripts(
      [
        ...scripts.map(({ label, name }) => ({ label, args: [script(name), port] })),
        ...effect3Scripts.flatMap(({ label, name }) => {
          const path = effect3Script(name)
          return path === undefined ? [] : [{ label, args: [path, port] }]
        }),
        ...bundledRuns
      ],
      rounds,
      { timeLimitMs: 30_000, log: context.log }
    )
    const parts = await breakdown(context, rounds)
    const openai = stats.get("openai")
    const rows = [...scripts, ...effect3Scripts, ...bundledScripts].map(({ label, what }) => {
      const s = stats.get(label)
      if (!completeRuns(s)) {
        const why = s?.error ?? (isBuilt(edition) ? "no run" : edition.error)
        return [label, what, `not measured: ${why}`, "", "", "", "", "", "", ""]
      }
      return [
        label,
        what,
        `${num(s.wallMs.median)} ms`,
        range(s.wallMs),
        completeRuns(openai) ? ratio(s.wallMs.median / openai.wallMs.median) : "–",
        s.importedMs === undefined ? "–" : `${num(s.importedMs.median)} ms`,
        `${num(s.cpuMs.median)} ms`,
        completeRuns(openai) ? ratio(s.cpuMs.median / openai.cpuMs.median) : "–",
        mb(s.maxRss.median),
        completeRuns(openai) ? ratio(s.maxRss.median / openai.maxRss.median) : "–"
      ]
    })
    const verdicts: Array<Verdict> = []
    for (const label of ["Switchboard", "Switchboard (module imports)"]) {
      const s = stats.get(label)
      const ok = completeRuns(s) && completeRuns(openai)
      verdicts.push(
        {
          target: `${label}: cold start wall time ≤ ${wallTarget} × openai's`,
          measured: ok
            ? `${ratio(s.wallMs.median / openai.wallMs.median)} (${num(s.wallMs.median)} vs ${num(openai.wallMs.median)} ms)`
            : (s?.error ?? openai?.error ?? "a run failed"),
          pass: ok && s.wallMs.median <= wallTarget * openai.wallMs.median
        },
        {
          target: `${label}: cold start peak RSS ≤ ${rssTarget} × openai's`,
          measured: ok
            ? `${ratio(s.maxRss.median / openai.maxRss.median)} (${mb(s.maxRss.median)} vs ${mb(openai.maxRss.median)})`
            : (s?.error ?? openai?.error ?? "a run failed"),
          pass: ok && s.maxRss.median <= rssTarget * openai.maxRss.median
        }
      )
    }
    return {
      id,
      title,
      method,
      tables: [
        {
          table: {
            header: ["process", "what", "wall (median)", "min–max", "× openai", "imports", "CPU", "CPU × openai", "peak RSS", "RSS × openai"],
            numeric: [2, 3, 4, 5, 6, 7, 8, 9],
            rows
          }
        },
        ...(typeof parts === "string" ? [] : [{
          caption: "Where a Switchboard cold start goes: one process imports each step after the ones before it " +
            `(\`cold/imports.js\`, ${rounds} runs, medians; each row is what that step added)`,
          table: parts
        }])
      ],
      verdicts,
      notes: [
        ...(typeof parts === "string" ? [parts] : []),
        "The bundled rows are what an application that bundles for deployment sees (no verdict: the targets are for " +
        "the packages as installed). One file spares Node the resolving, reading and linking of several hundred " +
        "modules; on the Effect 3 edition esbuild also drops `fast-check`, which effect 3's `Schema` imports but no " +
        "call here uses."
      ],
      serverCores: undefined
    }
  }
}
