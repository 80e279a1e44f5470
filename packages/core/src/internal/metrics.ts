/**
 * The GenAI histograms' names and options, shared by `Telemetry` (the
 * public metrics) and `observe.ts`, which makes one histogram of the same
 * series per kind of call, its labels as its own attributes.
 */

/** What `Metric.histogram` takes for one of the SDK's histograms. */
export interface Definition {
  readonly name: string
  readonly description: string
  readonly boundaries: ReadonlyArray<number>
}

// The bucket boundaries the conventions advise.
const tokenBoundaries = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864
]
const secondBoundaries = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92
]

export const tokenUsage: Definition = {
  name: "gen_ai.client.token.usage",
  boundaries: tokenBoundaries,
  description: "Number of input and output tokens used"
}

export const operationDuration: Definition = {
  name: "gen_ai.client.operation.duration",
  boundaries: secondBoundaries,
  description: "GenAI operation duration"
}

export const timeToFirstChunk: Definition = {
  name: "gen_ai.client.operation.time_to_first_chunk",
  boundaries: secondBoundaries,
  description: "Time to receive the first chunk of a streamed reply"
}
