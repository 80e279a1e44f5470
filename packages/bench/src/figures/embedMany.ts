/**
 * `Embeddings.embedMany`: batched (the default 128 inputs per request) against
 * one request per input, both at the default concurrency of 4. The batched
 * mode embeds ten times the inputs and is warmed up by two whole runs: at the
 * same count its timed run lasted about 80 ms after about 160 warm-up
 * requests, and measured the JIT's warm-up and one collection more than the
 * path (docs/decisions.md).
 */
import { complete, type Context, type Figure, interleave, maxServerCores } from "../lib/figure.js"
import { mb, micros, num, range, ratio } from "../lib/stats.js"

const id = "embed-many"
/** How many times more inputs the batched mode embeds, so that its timed run lasts about as long. */
const batchedScale = 10
const title = "Embeddings.embedMany"

export const figure: Figure = {
  id,
  title,
  run: async (context: Context) => {
    const { embed, timeLimitMs } = context.settings
    const method =
      `\`Embeddings.embedMany\` of short inputs (\`input 0\`, \`input 1\`, …): ${num(embed.inputs * batchedScale)} ` +
      `batched (default \`batchSize\` 128, each process warmed up by two whole runs first) against ${num(embed.inputs)} ` +
      `sent one request per input (\`batchSize: 1\`, warmed up by one whole run), both at the default ` +
      `concurrency 4, ${embed.rounds} interleaved rounds. The server returns each batch's vectors in reverse order ` +
      "(with their `index`) and puts the input's number in each vector's first component; every run checks that " +
      "vector i belongs to input i."
    const modes = [
      { label: "batched (batchSize 128)", mode: "batched" as const },
      { label: "one request per input", mode: "per-input" as const }
    ]
    const stats = await interleave(
      context,
      modes.map(({ label, mode }) => ({
        label,
        spec: {
          workload: "embed",
          mode,
          inputs: mode === "batched" ? embed.inputs * batchedScale : embed.inputs,
          port: context.server.port,
          timeLimitMs
        }
      })),
      embed.rounds
    )
    const batched = stats.get(modes[0]!.label)
    const single = stats.get(modes[1]!.label)
    const rows = modes.map(({ label }) => {
      const s = stats.get(label)!
      if (!complete(s)) return [label, `failed: ${s.error ?? "no run"}`, "", "", "", ""]
      return [
        label,
        num(s.rate.median),
        range(s.rate),
        complete(single) ? ratio(s.rate.median / single.rate.median) : "–",
        micros(s.cpuPerUnit.median),
        mb(s.peakRss.median)
      ]
    })
    const ok = complete(batched) && complete(single)
    return {
      id,
      title,
      method,
      tables: [{
        table: {
          header: ["mode", "inputs/s (median)", "min–max", "× one per input", "CPU/input", "peak RSS"],
          numeric: [1, 2, 3, 4, 5],
          rows
        }
      }],
      verdicts: [{
        target: "batched ≥ 20 × one-request-per-input, order checked",
        measured: ok
          ? `${ratio(batched.rate.median / single.rate.median)} (client CPU per input ${
            ratio(single.cpuPerUnit.median / batched.cpuPerUnit.median)
          }), order checked in every run`
          : "a run failed",
        pass: ok && batched.rate.median >= 20 * single.rate.median
      }],
      notes: [],
      serverCores: maxServerCores(stats.values())
    }
  }
}
