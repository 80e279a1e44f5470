/**
 * The browser entry's weight: one chat call and one streamed chat, bundled
 * and gzipped, against the same page with the official client and the AI
 * SDK, and the floor of `effect` itself (`src/bundle-size.ts`); ours by
 * esbuild and by Vite, by module path and from the package indexes.
 */
import { entryPoints, measure, type Measured, targetGzipBytes } from "../bundle-size.js"
import { effect3, isBuilt } from "../lib/effect3.js"
import type { Context, Figure } from "../lib/figure.js"
import { runScript } from "../lib/processes.js"
import { kb } from "../lib/stats.js"

const id = "browser-bundle"
const title = "Browser bundle"

/** The Effect 3 edition's own bundle-size script (its pages, its esbuild): its two Switchboard entries, or why not. */
const effect3Bundles = async (context: Context): Promise<ReadonlyArray<Measured> | string> => {
  const edition = effect3(context.log)
  if (!isBuilt(edition)) return edition.error
  const run = await runScript([edition.bench("bundle-size.js"), "--json"], { timeLimitMs: 120_000 })
  if (run.exitCode !== 0) return `its bundle-size script failed: ${run.stderr.trim().split("\n").slice(-2).join(" ")}`
  return (JSON.parse(run.stdout) as ReadonlyArray<Measured>)
    .filter((m) => m.name.startsWith("switchboard"))
    .map((m) => ({ ...m, version: edition.effectVersion }))
}

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const method =
      "The same page (one `Chat.create`-like call and one streamed chat, rendered into the document) written with each " +
      "client (`packages/bench/bundle/*.ts`), bundled by esbuild (minified, ESM, browser platform, es2022) and " +
      "compressed with zlib gzip level 9 and brotli; our four pages (by module path and from the package indexes, " +
      "`layerChat` and `layer`) also by Vite's production build (Rollup, minified by esbuild). The targets are " +
      "esbuild's bytes. Deterministic: not affected by the machine's load. Alone: " +
      "`pnpm build && node packages/bench/dist/bundle-size.js` (or `pnpm bench --only browser-bundle`)."
    const all: Array<Measured> = []
    for (const entry of entryPoints) all.push(await measure(entry))
    const ours = all.find((m) => m.name === "switchboard-all")
    const effect3Rows = await effect3Bundles(context)
    return {
      id,
      title,
      method,
      tables: [
        {
          table: {
            header: ["entry", "version", "minified", "gzip", "brotli"],
            numeric: [2, 3, 4],
            rows: [
              ...all.map((m) => [m.description, m.version, kb(m.minifiedBytes), kb(m.gzipBytes), kb(m.brotliBytes)]),
              ...(typeof effect3Rows === "string"
                ? [["Effect 3 edition", "2ccd179", `not measured: ${effect3Rows}`, "", ""]]
                : effect3Rows.map((m) => [`Effect 3 edition: ${m.description}`, `effect ${m.version}`, kb(m.minifiedBytes), kb(m.gzipBytes), kb(m.brotliBytes)]))
            ]
          }
        },
        ...(ours === undefined ? [] : [{
          caption: "What the full `BrowserSwitchboard.layer` entry is made of (minified bytes in the bundle)",
          table: {
            header: ["package", "minified", "share"],
            numeric: [1, 2],
            rows: ours.packages.map((p) => [p.name, kb(p.bytes), `${((100 * p.bytes) / ours.minifiedBytes).toFixed(0)} %`])
          }
        }])
      ],
      verdicts: Object.entries(targetGzipBytes).map(([name, target]) => {
        const m = all.find((e) => e.name === name)
        return {
          target: `${entryPoints.find((e) => e.name === name)?.description ?? name}: ≤ ${kb(target)} gzip`,
          measured: m === undefined ? "not measured" : kb(m.gzipBytes),
          pass: m !== undefined && m.gzipBytes <= target
        }
      }),
      notes: [],
      serverCores: undefined
    }
  }
}
