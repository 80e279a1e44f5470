/**
 * A reference, not a contender: the bare `effect/http` HttpClient over
 * undici (`NodeHttpClient.layerUndici`), `response.json`, no schema — what
 * any SDK built on it starts from.
 */
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { apiKey, chatRequest } from "../lib/fixtures.js"
import type { ClientSpec, Measured } from "../lib/ipc.js"
import { baseUrl, checkCompletion, measure } from "./common.js"

type Spec<W extends ClientSpec["workload"]> = Extract<ClientSpec, { workload: W }>

export const chat = async (spec: Spec<"chat">): Promise<Measured> => {
  const runtime = ManagedRuntime.make(NodeHttpClient.layerUndici)
  const url = `${baseUrl(spec.port)}/v1/chat/completions`
  const headers = { accept: "application/json", authorization: `Bearer ${apiKey}` }
  const once = Effect.flatMap(HttpClient.HttpClient, (client) =>
    Effect.suspend(() =>
      client.execute(HttpClientRequest.post(url, { headers, body: HttpBody.text(JSON.stringify(chatRequest), "application/json") }))
    ).pipe(
      Effect.flatMap((response) =>
        response.status === 200 ? response.json : Effect.fail(new Error(`HTTP ${response.status}`))
      ),
      Effect.map((json) => checkCompletion(json as Parameters<typeof checkCompletion>[0]))
    ))
  const run = (count: number) =>
    runtime.runPromise(
      Effect.forEach(Array.from({ length: count }), () => once, { concurrency: spec.concurrency, discard: true }).pipe(
        Effect.timeoutOrElse({ duration: spec.timeLimitMs, orElse: () => Effect.fail(new Error("time limit reached")) })
      )
    )
  try {
    await run(spec.warmup)
    return await measure(spec.count, () => run(spec.count))
  } finally {
    await runtime.dispose()
  }
}
