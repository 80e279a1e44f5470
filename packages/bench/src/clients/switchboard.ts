/**
 * Switchboard as a user calls it: `NodeSwitchboard.layer` built once into a
 * `ManagedRuntime`, full response decoding by the SDK.
 *
 * - `switchboard`: `runtime.runPromise(Chat.create(…))` per request from 32
 *   Promise workers, as an application that is not all Effect does.
 * - `switchboard-forEach`: one Effect program, `Effect.forEach(…, { concurrency: 32 })`.
 * - `switchboard-wire-undici`, `switchboard-wire-fetch`: the `runPromise` client
 *   over `HttpClientWire` instead of the own `NodeHttpWire`, with
 *   `@effect/platform-node`'s `NodeHttpClient.layerUndici` or `FetchHttpClient`:
 *   the A/B that says whether the own wire pays for itself.
 */
import { Chat, Embeddings, Switchboard, SwitchboardConfig, TaskJournal } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import {
  apiKey,
  chatRequest,
  checkEmbeddingOrder,
  embeddingInputs,
  embeddingModel,
  pacedStreamRequest,
  streamRequest
} from "../lib/fixtures.js"
import type { ClientSpec, Measured } from "../lib/ipc.js"
import { baseUrl, checkCompletion, deadline, measure, measureOpenStreams, pool } from "./common.js"
import { counted } from "./counted.js"

type Spec<W extends ClientSpec["workload"]> = Extract<ClientSpec, { workload: W }>

/** Which wire a client runs over: the own Node wire, or `HttpClientWire` over an `effect/http` client. */
type Wire = "node" | "undici" | "fetch"

const wireOf = (client: string): Wire =>
  client.endsWith("-wire-undici") ? "undici" : client.endsWith("-wire-fetch") ? "fetch" : "node"

/** `NodeSwitchboard.layer`'s services, with `HttpClientWire` over the given client in place of `NodeHttpWire`. */
const overHttpClient = async (port: number, wire: "undici" | "fetch") => {
  const [HttpClientWire, FetchHttpClient, NodeHttpClient] = await Promise.all([
    import("@switchboard/core/HttpClientWire"),
    import("effect/http/FetchHttpClient"),
    import("@effect/platform-node/NodeHttpClient")
  ])
  return Switchboard.layer.pipe(
    Layer.provideMerge(SwitchboardConfig.layer({ baseUrl: baseUrl(port), apiKey })),
    Layer.provideMerge(TaskJournal.layerMemory),
    Layer.provide(HttpClientWire.layer),
    Layer.provide(wire === "undici" ? NodeHttpClient.layerUndici : FetchHttpClient.layer)
  )
}

export const runtimeFor = async (port: number, client = "switchboard") => {
  const wire = wireOf(client)
  return wire === "node"
    ? ManagedRuntime.make(NodeSwitchboard.layer({ baseUrl: baseUrl(port), apiKey }))
    : ManagedRuntime.make(await overHttpClient(port, wire))
}

const limited = <A, E, R>(timeLimitMs: number, effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutOrElse(effect, {
    duration: timeLimitMs,
    orElse: () => Effect.fail(new Error(`time limit of ${timeLimitMs} ms reached`))
  })

const createOnce = Effect.map(Chat.create(chatRequest), checkCompletion)

export const chat = async (spec: Spec<"chat">): Promise<Measured> => {
  const runtime = await runtimeFor(spec.port, spec.client)
  try {
    if (spec.client === "switchboard-forEach") {
      const run = (count: number) =>
        runtime.runPromise(
          limited(spec.timeLimitMs, Effect.forEach(Array.from({ length: count }), () => createOnce, {
            concurrency: spec.concurrency,
            discard: true
          }))
        )
      await run(spec.warmup)
      return await measure(spec.count, () => run(spec.count))
    }
    const until = deadline(spec.timeLimitMs)
    const once = () => runtime.runPromise(createOnce)
    await pool(spec.warmup, spec.concurrency, until, once)
    return await measure(spec.count, () => pool(spec.count, spec.concurrency, until, once))
  } finally {
    await runtime.dispose()
  }
}

/** One stream, consumed as a user would: `Stream.runForEach`, or `Stream.runFold` (`switchboard-fold`). */
const consume = (chunks: number, fold: boolean, paced = false) =>
  counted(Chat.stream(paced ? pacedStreamRequest(chunks) : streamRequest(chunks)), chunks, fold)

export const stream = async (spec: Spec<"stream">): Promise<Measured> => {
  const runtime = await runtimeFor(spec.port, spec.client)
  const fold = spec.client === "switchboard-fold"
  try {
    const run = (streams: number, chunks: number) =>
      runtime.runPromise(
        limited(spec.timeLimitMs, Effect.forEach(Array.from({ length: streams }), () => consume(chunks, fold), { discard: true }))
      )
    await run(spec.warmupStreams, Math.min(spec.chunks, 2_000))
    return await measure(spec.streams * spec.chunks, () => run(spec.streams, spec.chunks))
  } finally {
    await runtime.dispose()
  }
}

export const concurrentStreams = async (spec: Spec<"concurrent-streams">): Promise<Measured> => {
  const runtime = await runtimeFor(spec.port)
  try {
    const all = (streams: number) =>
      runtime.runPromise(
        limited(
          spec.timeLimitMs,
          Effect.forEach(Array.from({ length: streams }), () => consume(spec.chunks, false, true), {
            concurrency: "unbounded",
            discard: true
          })
        )
      )
    await all(spec.warmupStreams)
    return await measureOpenStreams(spec.streams * spec.chunks, () => all(spec.streams))
  } finally {
    await runtime.dispose()
  }
}

export const embed = async (spec: Spec<"embed">): Promise<Measured> => {
  const runtime = await runtimeFor(spec.port)
  const options = spec.mode === "batched" ? { model: embeddingModel } : { model: embeddingModel, batchSize: 1 }
  try {
    const run = async (count: number) => {
      const inputs = embeddingInputs(count)
      const vectors = await runtime.runPromise(limited(spec.timeLimitMs, Embeddings.embedMany(inputs, options)))
      checkEmbeddingOrder(vectors, count)
    }
    // Warm-up, so both modes are measured past the JIT: one whole run, two
    // batched (a batched run sends 128 times fewer requests).
    for (let i = 0; i < (spec.mode === "batched" ? 2 : 1); i++) await run(spec.inputs)
    return await measure(spec.inputs, () => run(spec.inputs))
  } finally {
    await runtime.dispose()
  }
}
