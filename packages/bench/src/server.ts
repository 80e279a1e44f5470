/**
 * The loopback server of the benchmarks, run in its own process by `main.ts`.
 *
 * It must never be the bottleneck, so every answer is prepared once: a fixed
 * completion, SSE streams written as large batches of events (256 per write,
 * honouring back-pressure), and embeddings built from a fixed vector tail.
 * It listens on 127.0.0.1 only, tells its parent the port over IPC, answers
 * `cpu` queries with `process.cpuUsage()`, and stops on `stop`, when its parent
 * goes away, or after its lifetime limit, whichever comes first.
 *
 * It is a `node:cluster` of `BENCH_SERVER_WORKERS` (default 2) processes
 * sharing the port: one process answered raw undici's requests at 0.77 cores,
 * near where its event loop, not the client, sets the pace. The primary
 * accepts connections and hands them out; a `cpu` query answers the sum of
 * the primary's and every worker's CPU time.
 */
import cluster, { type Worker } from "node:cluster"
import * as http from "node:http"
import {
  chatCompletion,
  chatModel,
  embeddingDimensions,
  embeddingModel,
  firstChunk,
  lastChunk,
  middleChunk,
  toolCallCompletion
} from "./lib/fixtures.js"
import type { ParentToServer, ServerToParent } from "./lib/ipc.js"
import { serverWorkers } from "./lib/serverWorkers.js"

const lifetimeMs = Number(process.env["BENCH_SERVER_LIFETIME_MS"] ?? 20 * 60_000)
const eventsPerWrite = 256
const pacedEventsPerWrite = 10

const json = (value: unknown) => Buffer.from(JSON.stringify(value))
const event = (value: unknown) => Buffer.from(`data: ${JSON.stringify(value)}\n\n`)

const completionBody = json(chatCompletion)
const jsonHeaders = (length: number) => [
  "content-type",
  "application/json",
  "content-length",
  String(length),
  "x-request-id",
  "req_bench"
]
const completionHeaders = jsonHeaders(completionBody.length)
const sseHeaders = ["content-type", "text/event-stream", "cache-control", "no-cache", "x-request-id", "req_bench"]

const firstEvent = event(firstChunk)
const middleEvent = event(middleChunk)
const middleBatch = Buffer.concat(Array.from({ length: eventsPerWrite }, () => middleEvent))
const lastEvents = Buffer.concat([event(lastChunk), Buffer.from("data: [DONE]\n\n")])

const toolCallBodies = new Map<number, Buffer>()
const toolCallBody = (calls: number) => {
  let body = toolCallBodies.get(calls)
  if (body === undefined) toolCallBodies.set(calls, body = json(toolCallCompletion(calls)))
  return body
}

const vectorTail = Array.from({ length: embeddingDimensions - 1 }, (_, i) => ((i + 1) / 64).toFixed(6)).join(",")

const send = (res: http.ServerResponse, status: number, body: Buffer) => {
  res.writeHead(status, status === 200 && body === completionBody ? completionHeaders : jsonHeaders(body.length))
  res.end(body)
}

const drained = (res: http.ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done)
      res.off("close", done)
      resolve()
    }
    res.on("drain", done)
    res.on("close", done)
  })

/** `chunks` chunk events (first, middles, last with `finish_reason`), then `[DONE]`. */
const stream = async (res: http.ServerResponse, chunks: number) => {
  res.writeHead(200, sseHeaders)
  res.write(firstEvent)
  let left = Math.max(0, chunks - 2)
  while (left > 0) {
    const n = Math.min(left, eventsPerWrite)
    left -= n
    const ok = res.write(n === eventsPerWrite ? middleBatch : middleBatch.subarray(0, n * middleEvent.length))
    if (!ok) await drained(res)
    if (res.destroyed) return
  }
  res.end(lastEvents)
}

/**
 * A stream of `chunks` events written a few at a time, yielding to the event
 * loop between writes: the server's many open streams advance side by side,
 * as a relay's upstream answers do.
 */
const pacedStream = async (res: http.ServerResponse, chunks: number) => {
  res.writeHead(200, sseHeaders)
  res.write(firstEvent)
  let left = Math.max(0, chunks - 2)
  while (left > 0) {
    await new Promise<void>((resolve) => setImmediate(resolve))
    if (res.destroyed) return
    const n = Math.min(left, pacedEventsPerWrite)
    left -= n
    if (!res.write(middleBatch.subarray(0, n * middleEvent.length))) await drained(res)
  }
  res.end(lastEvents)
}

const streamPattern = /"stream"\s*:\s*true/
const pacedPattern = /"user"\s*:\s*"paced"/
const maxTokensPattern = /"max_tokens"\s*:\s*(\d+)/
const toolNamePattern = /"name"\s*:\s*"noop_\d+"/g

const chat = (res: http.ServerResponse, body: string) => {
  if (streamPattern.test(body)) {
    const chunks = Number(maxTokensPattern.exec(body)?.[1] ?? 16)
    ;(pacedPattern.test(body) ? pacedStream : stream)(res, chunks).catch(() => res.destroy())
    return
  }
  if (body.includes("\"tools\"")) {
    // Agent figure: call every `noop_*` tool once, then answer once the tool results are back.
    if (body.includes("\"role\":\"tool\"")) return send(res, 200, completionBody)
    const calls = new Set(body.match(toolNamePattern) ?? []).size
    return send(res, 200, toolCallBody(calls))
  }
  send(res, 200, completionBody)
}

/** Vectors whose first component is the number in `input N`, in reverse order (with their `index`). */
const embeddings = (res: http.ServerResponse, body: string) => {
  let inputs: Array<string>
  try {
    const input = (JSON.parse(body) as { input: string | Array<string> }).input
    inputs = typeof input === "string" ? [input] : input
  } catch {
    return send(res, 400, json({ error: { message: "bad body", type: "invalid_request_error" } }))
  }
  const items = new Array<string>(inputs.length)
  for (let i = inputs.length - 1, j = 0; i >= 0; i--, j++) {
    const text = inputs[i]!
    const n = Number(text.slice(text.lastIndexOf(" ") + 1)) || 0
    items[j] = `{"object":"embedding","index":${i},"embedding":[${n},${vectorTail}]}`
  }
  send(
    res,
    200,
    Buffer.from(
      `{"object":"list","data":[${items.join(",")}],"model":"${embeddingModel}","usage":{"prompt_tokens":${inputs.length},"total_tokens":${inputs.length}}}`
    )
  )
}

const notFound = json({ error: { message: "not found", type: "invalid_request_error" } })
const modelList = json({
  object: "list",
  data: [chatModel, embeddingModel].map((id) => ({ id, object: "model", created: 1_735_689_600, owned_by: "bench" }))
})


/** Between the primary and a worker: the worker's CPU time, asked by id. */
type ToWorker = { readonly type: "cpu"; readonly id: number }
type FromWorker = { readonly type: "cpu"; readonly id: number; readonly usage: NodeJS.CpuUsage }

const serve = () => {
  const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (part: string) => {
      body += part
    })
    req.on("end", () => {
      if (req.method === "GET" && req.url === "/v1/models") return send(res, 200, modelList)
      if (req.method !== "POST") return send(res, 404, notFound)
      if (req.url === "/v1/chat/completions") return chat(res, body)
      if (req.url === "/v1/embeddings") return embeddings(res, body)
      send(res, 404, notFound)
    })
  })
  process.on("message", (message: ToWorker) => {
    if (message.type === "cpu") process.send?.({ type: "cpu", id: message.id, usage: process.cpuUsage() } satisfies FromWorker)
  })
  process.on("disconnect", () => process.exit(0))
  // A backlog above the open-streams figure's 1,000 connections at once: past
  // the default (511) the kernel drops SYNs, and clients wait a second to retry.
  // Workers listening on port 0 share the one port the primary picks.
  server.listen({ port: 0, host: "127.0.0.1", backlog: 2_048 })
}

const primary = () => {
  const tell = (message: ServerToParent) => process.send?.(message)
  const workers: Array<Worker> = []
  const stop = (code: number) => {
    for (const worker of workers) worker.process.kill("SIGKILL")
    process.exit(code)
  }
  let nextId = 0
  /** The primary's CPU time plus every worker's. */
  const cpu = async (): Promise<NodeJS.CpuUsage> => {
    const usages = await Promise.all(workers.map((worker) =>
      new Promise<NodeJS.CpuUsage>((resolve) => {
        const id = nextId++
        const onMessage = (message: FromWorker) => {
          if (message.type !== "cpu" || message.id !== id) return
          worker.off("message", onMessage)
          resolve(message.usage)
        }
        worker.on("message", onMessage)
        worker.send({ type: "cpu", id } satisfies ToWorker)
      })
    ))
    return usages.reduce((sum, u) => ({ user: sum.user + u.user, system: sum.system + u.system }), process.cpuUsage())
  }
  process.on("message", (message: ParentToServer) => {
    if (message.type === "cpu") cpu().then((usage) => tell({ type: "cpu", id: message.id, usage }), () => stop(1))
    else if (message.type === "stop") stop(0)
  })
  process.on("disconnect", () => stop(0))
  setTimeout(() => stop(2), lifetimeMs).unref()
  let listening = 0
  for (let i = 0; i < serverWorkers; i++) {
    const worker = cluster.fork()
    workers.push(worker)
    worker.on("exit", () => stop(1))
    worker.once("listening", (address) => {
      if (++listening === serverWorkers) tell({ type: "ready", port: address.port })
    })
  }
}

if (cluster.isPrimary) primary()
else serve()
