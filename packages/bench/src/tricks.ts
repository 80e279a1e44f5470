/**
 * The speed tricks of the hot paths, each against what it replaced, in one
 * process: `node dist/tricks.js [rounds]`. Rounds alternate the two sides
 * (A B A B …) so that load from other processes falls on both; prints one
 * JSON line of medians and min–max, in microseconds per operation.
 */
import { performance } from "node:perf_hooks"
import * as Protocol from "@switchboard/core/Protocol"
// Internal modules, exported for the bench only (core's package.json).
import { isNonEmptyStrings, isPlainEmbeddingResponse } from "@switchboard/core/internal/plain"
import { decoder, encoder, jsonProblem, plainDecoder } from "@switchboard/core/internal/validate"
import * as Schema from "effect/Schema"
import * as SchemaParser from "effect/SchemaParser"
import { chatCompletion, chatRequest } from "./lib/fixtures.js"

export interface Trick {
  readonly name: string
  /** What the trick is, and what it is measured against. */
  readonly what: string
  readonly trick: { readonly median: number; readonly min: number; readonly max: number }
  readonly without: { readonly median: number; readonly min: number; readonly max: number }
}

const vector = Array.from({ length: 1536 }, (_, i) => Math.sin(i) / 10)
const embeddingResponse = {
  object: "list",
  model: "text-embedding-3-small",
  data: Array.from({ length: 16 }, (_, index) => ({ object: "embedding", index, embedding: vector })),
  usage: { prompt_tokens: 64, total_tokens: 64 }
}
const inputs = Array.from({ length: 100 }, (_, i) => `input number ${i}`)
const dotted = { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini", "server.address": "127.0.0.1", "server.port": 8080 }
const more = { "gen_ai.request.max_tokens": 32, "gen_ai.request.temperature": 0.2, "gen_ai.request.top_p": 1 }

/** `Protocol.Vector` (a declared check) against the schema it replaced, `Schema.Array(Schema.Number)`. */
const decodeVector = SchemaParser.decodeUnknownResult(Protocol.Vector)
const decodeNumbers = SchemaParser.decodeUnknownResult(Schema.Array(Schema.Number))
const isEmbeddingResponse = SchemaParser.is(Protocol.EmbeddingResponse)
const isStrings = SchemaParser.is(Schema.Array(Schema.NonEmptyString))
const plainCompletion = plainDecoder(Protocol.ChatCompletion)
const decodeCompletion = decoder(Protocol.ChatCompletion)
const encodeRequest = encoder(Protocol.ChatRequest)
const encodeOnly = SchemaParser.encodeUnknownResult(Protocol.ChatRequest)

const pairs: ReadonlyArray<{ readonly name: string; readonly what: string; readonly trick: () => unknown; readonly without: () => unknown }> = [
  {
    name: "Protocol.Vector",
    what: "an embedding (1,536 numbers) decoded through the declared `Vector` check, against `Schema.Array(Schema.Number)`",
    trick: () => decodeVector(vector),
    without: () => decodeNumbers(vector)
  },
  {
    name: "isPlainEmbeddingResponse",
    what: "a 16-item embeddings response checked by hand (`internal/plain.ts`), against the compiled `Schema.is`",
    trick: () => isPlainEmbeddingResponse(embeddingResponse),
    without: () => isEmbeddingResponse(embeddingResponse)
  },
  {
    name: "isNonEmptyStrings",
    what: "100 `embedMany` inputs checked by a loop, against `Schema.is(Schema.Array(Schema.NonEmptyString))`",
    trick: () => isNonEmptyStrings(inputs),
    without: () => isStrings(inputs)
  },
  {
    name: "plainDecoder",
    what: "a chat completion decoded with the `Schema.is` shortcut (`internal/validate.ts`), against the decoder alone",
    trick: () => plainCompletion(chatCompletion),
    without: () => decodeCompletion(chatCompletion)
  },
  {
    name: "encoder's `is` shortcut",
    what: "a chat request through `encoder` (JSON check, `Schema.is`, the value as it is), against the JSON check and `encodeUnknownResult`",
    trick: () => encodeRequest(chatRequest),
    without: () => jsonProblem(chatRequest) ?? encodeOnly(chatRequest)
  },
  {
    name: "Object.assign (GenAI attributes)",
    what: "dotted-key span attributes merged by `Object.assign` onto a fresh object (`internal/genAi.ts`, `observe.ts`), against a spread",
    trick: () => Object.assign({ ...dotted }, more, { "gen_ai.response.model": "gpt-4o-mini" }),
    without: () => ({ ...dotted, ...more, "gen_ai.response.model": "gpt-4o-mini" })
  }
]

let sink: unknown
const time = (run: () => unknown, iterations: number) => {
  const start = performance.now()
  for (let i = 0; i < iterations; i++) sink = run()
  return ((performance.now() - start) * 1000) / iterations
}

const summary = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return {
    median: sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!
  }
}

const main = () => {
  const rounds = Number(process.argv[2] ?? "7")
  const results: Array<Trick> = []
  for (const { name, trick, what, without } of pairs) {
    // Iterations for about 20 ms per side per round, from a warm-up of both.
    for (let i = 0; i < 2_000; i++) sink = (trick(), without())
    const perOp = Math.max(time(trick, 200), time(without, 200), 0.01)
    const iterations = Math.max(50, Math.round(20_000 / perOp))
    const a: Array<number> = []
    const b: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      a.push(time(trick, iterations))
      b.push(time(without, iterations))
    }
    results.push({ name, what, trick: summary(a), without: summary(b) })
  }
  if (sink === Symbol.for("never")) console.error("unreachable")
  process.stdout.write(`${JSON.stringify(results)}\n`)
}

main()
