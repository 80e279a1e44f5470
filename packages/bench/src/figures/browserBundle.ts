/**
 * The browser entry's weight: one chat call and one streamed chat, bundled
 * and gzipped, against the same page with the official client and the AI
 * SDK, and the floor of `effect` itself (`src/bundle-size.ts`).
 */
import { entryPoints, measure, targetGzipBytes } from "../bundle-size.js"
import type { Context, Figure } from "../lib/figure.js"
import { num } from "../lib/stats.js"

const id = "browser-bundle"
const title = "Browser bundle"

const kb = (bytes: number) => `${num(bytes / 1024)} KB`

export const figure: Figure = {
  id,
  title,
  run: async (_context: Context) => {
    const method =
      "The same page (one `Chat.create`-like call and one streamed chat, rendered into the document) written with each " +
      "client (`packages/bench/bundle/*.ts`), bundled by esbuild (minified, ESM, browser platform, es2022) and " +
      "compressed with zlib gzip level 9 and brotli. Deterministic: not affected by the machine's load."
    const all = []
    for (const entry of entryPoints) all.push(await measure(entry))
    const ours = all.find((m) => m.name === "switchboard")
    return {
      id,
      title,
      method,
      tables: [
        {
          table: {
            header: ["entry", "version", "minified", "gzip", "brotli"],
            numeric: [2, 3, 4],
            rows: all.map((m) => [m.description, m.version, kb(m.minifiedBytes), kb(m.gzipBytes), kb(m.brotliBytes)])
          }
        },
        ...(ours === undefined ? [] : [{
          caption: "What the Switchboard entry is made of (minified bytes in the bundle)",
          table: {
            header: ["package", "minified", "share"],
            numeric: [1, 2],
            rows: ours.packages.map((p) => [p.name, kb(p.bytes), `${((100 * p.bytes) / ours.minifiedBytes).toFixed(0)} %`])
          }
        }])
      ],
      verdicts: [{
        target: `@switchboard/browser entry ≤ ${kb(targetGzipBytes)} gzip`,
        measured: ours === undefined ? "not measured" : kb(ours.gzipBytes),
        pass: ours !== undefined && ours.gzipBytes <= targetGzipBytes
      }],
      notes: [],
      serverCores: undefined
    }
  }
}
