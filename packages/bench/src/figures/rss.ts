/**
 * Peak RSS of the non-streaming run, from the same processes.
 */
import { complete, type Context, type Figure, notMeasured, type Verdict } from "../lib/figure.js"
import { mb, range, ratio } from "../lib/stats.js"
import * as NonStreaming from "./nonStreaming.js"

const id = "rss"
const title = "Peak RSS of the non-streaming run"
const method =
  "The client processes of the non-streaming figure sample `process.memoryUsage.rss()` every 10 ms and report " +
  "`process.resourceUsage().maxRSS` at the end; a run's peak is the higher of the two, over the process's whole " +
  "life (start-up, warm-up and the timed section)."

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const stats = context.results.get(NonStreaming.id)?.stats
    if (stats === undefined) return notMeasured(id, title, method, "the non-streaming figure did not run")
    const raw = stats.get("raw undici")
    const rows = NonStreaming.clients.map(({ label }) => {
      const s = stats.get(label)
      if (!complete(s)) return [label, "failed", "", ""]
      return [label, mb(s.peakRss.median), range(s.peakRss, mb), complete(raw) ? ratio(s.peakRss.median / raw.peakRss.median) : "–"]
    })
    const verdicts: Array<Verdict> = NonStreaming.switchboardLabels.map((label) => {
      const s = stats.get(label)
      return complete(s) && complete(raw)
        ? {
          target: `${label}: peak RSS ≤ 1.5 × raw undici's`,
          measured: `${ratio(s.peakRss.median / raw.peakRss.median)} (${mb(s.peakRss.median)} vs ${mb(raw.peakRss.median)})`,
          pass: s.peakRss.median <= 1.5 * raw.peakRss.median
        }
        : { target: `${label}: peak RSS ≤ 1.5 × raw undici's`, measured: "a run failed", pass: false }
    })
    return {
      id,
      title,
      method,
      tables: [{ table: { header: ["client", "peak RSS (median)", "min–max", "× raw"], numeric: [1, 2, 3], rows } }],
      verdicts,
      notes: [],
      serverCores: undefined
    }
  }
}
