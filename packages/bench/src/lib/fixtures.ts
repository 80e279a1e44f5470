/**
 * The wire payloads every client sends and the server answers with, shared so
 * that all clients do exactly the same work.
 */

export const apiKey = "sk-bench-0000000000000000"
export const chatModel = "gpt-4o-mini"
export const embeddingModel = "text-embedding-3-small"

/** The non-streaming chat request: a short two-message conversation. */
export const chatRequest = {
  model: chatModel,
  messages: [
    { role: "system" as const, content: "You are a terse assistant." },
    { role: "user" as const, content: "Say hello to the benchmark." }
  ],
  max_tokens: 32
}

/** A streamed request whose stream has `chunks` events (the server reads `max_tokens`). */
export const streamRequest = (chunks: number) => ({
  model: chatModel,
  messages: [{ role: "user" as const, content: "Count for me." }],
  stream: true as const,
  max_tokens: chunks
})

/** A streamed request the server answers a few events at a time, between its other streams' writes. */
export const pacedStreamRequest = (chunks: number) => ({ ...streamRequest(chunks), user: "paced" })

/** A realistic completion (~700 bytes), as the service sends it. */
export const chatCompletion = {
  id: "chatcmpl-bench0000000000000000000000",
  object: "chat.completion",
  created: 1_735_689_600,
  model: chatModel,
  system_fingerprint: "fp_bench",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: "Hello, benchmark! This reply is a fixed string, long enough to look like a real answer.",
        refusal: null
      },
      logprobs: null,
      finish_reason: "stop"
    }
  ],
  usage: {
    prompt_tokens: 24,
    completion_tokens: 19,
    total_tokens: 43,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 }
  }
}

const chunkBase = {
  id: "chatcmpl-benchstream000000000000000",
  object: "chat.completion.chunk",
  created: 1_735_689_600,
  model: chatModel,
  system_fingerprint: "fp_bench"
}

/** One `chat.completion.chunk`; `finish` marks the last one. */
export const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
  ...chunkBase,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
})

export const firstChunk = chunk({ role: "assistant", content: "" }, null)
export const middleChunk = chunk({ content: " tok" }, null)
export const lastChunk = chunk({}, "stop")

/** Tool calls the server answers an agent request with (no `"role":"tool"` message yet). */
export const toolCallCompletion = (calls: number) => ({
  ...chatCompletion,
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: Array.from({ length: calls }, (_, i) => ({
          id: `call_bench_${i}`,
          type: "function",
          function: { name: `noop_${i}`, arguments: `{"n":${i}}` }
        }))
      },
      logprobs: null,
      finish_reason: "tool_calls"
    }
  ]
})

/** The input texts of the embeddings figure: `input 0`, `input 1`, … */
export const embeddingInputs = (count: number): Array<string> => Array.from({ length: count }, (_, i) => `input ${i}`)

/** Dimensions of the server's vectors. Its first component is the input's number, for the order check. */
export const embeddingDimensions = 8

/** Checks that vector `i` belongs to `input i`. */
export const checkEmbeddingOrder = (vectors: ReadonlyArray<ReadonlyArray<number>>, count: number): void => {
  if (vectors.length !== count) throw new Error(`expected ${count} vectors, got ${vectors.length}`)
  for (let i = 0; i < count; i++) {
    const v = vectors[i]
    if (v === undefined || v[0] !== i || v.length !== embeddingDimensions) {
      throw new Error(`vector ${i} is out of order or malformed: ${JSON.stringify(v)}`)
    }
  }
}
