import * as Protocol from "@switchboard/core/Protocol"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Http from "node:http"
import * as Emulator from "../src/Emulator.js"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: unknown
}

/** The JSON body decoded with one of core's Protocol schemas: every reply must fit the SDK's wire types. */
export const decode = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, reply: Reply): S["Type"] =>
  Schema.decodeUnknownSync(schema)(reply.json)

export const completion = (reply: Reply) => decode(Protocol.ChatCompletion, reply)

/** The assistant message of the first choice. */
export const message = (reply: Reply) => completion(reply).choices[0]!.message

export const errorOf = (reply: Reply) => decode(Protocol.ErrorBody, reply).error

/** A raw field by path, for checks on the exact wire shape. */
export const at = (value: unknown, ...path: ReadonlyArray<string | number>): unknown =>
  path.reduce<unknown>((v, key) => typeof v === "object" && v !== null ? (v as Record<string | number, unknown>)[key] : undefined, value)

const toReply = async (response: Response): Promise<Reply> => {
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    // streams and plain text stay as text
  }
  return { status: response.status, headers: response.headers, text, json }
}

export interface CallOptions {
  readonly method?: string
  readonly body?: unknown
  readonly rawBody?: string
  /** `null` sends no Authorization header; default the emulator's key. */
  readonly key?: string | null
  readonly signal?: AbortSignal
}

const init = (emulator: Emulator.Emulator["Service"], options: CallOptions): RequestInit => {
  const key = options.key === undefined ? emulator.apiKey : options.key
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
  return {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers: {
      "content-type": "application/json",
      ...(key === null ? {} : { authorization: `Bearer ${key}` })
    },
    ...(body === undefined ? {} : { body }),
    ...(options.signal ? { signal: options.signal } : {})
  }
}

/** A real HTTP request with fetch; fails when the connection fails. */
export const call = (path: string, options: CallOptions = {}) =>
  Effect.flatMap(Emulator.Emulator, (emulator) =>
    Effect.tryPromise(() => fetch(`${emulator.url}${path}`, init(emulator, options)).then(toReply)))

export const chat = (body: Record<string, unknown>) => call("/v1/chat/completions", { body: { model: "gpt-4o-mini", ...body } })

/** The `data:` payloads of an SSE body. */
export const events = (text: string): ReadonlyArray<string> =>
  text.split("\n\n").filter((e) => e.startsWith("data: ")).map((e) => e.slice("data: ".length))

/** The chunk events as parsed JSON, exactly as sent. */
export const rawChunks = (text: string): ReadonlyArray<unknown> =>
  events(text).filter((e) => e !== "[DONE]").map((e) => JSON.parse(e) as unknown)

/** The chunk events decoded with core's `ChatCompletionChunk`. */
export const chunks = (text: string): ReadonlyArray<Protocol.ChatCompletionChunk> =>
  rawChunks(text).map((c) => Schema.decodeUnknownSync(Protocol.ChatCompletionChunk)(c))

/** Content and tool calls folded from stream chunks, the way a client accumulates them. */
export const accumulate = (text: string) => {
  let content: string | null = null
  let finish: string | null = null
  const calls: Array<{ id: string; type: string; function: { name: string; arguments: string } }> = []
  for (const chunk of chunks(text)) {
    const choice = chunk.choices[0]
    if (!choice) continue
    if (typeof choice.delta.content === "string") content = (content ?? "") + choice.delta.content
    for (const d of choice.delta.tool_calls ?? []) {
      const index = d.index ?? 0
      if (d.id) calls[index] = { id: d.id, type: d.type ?? "function", function: { name: d.function?.name ?? "", arguments: "" } }
      calls[index]!.function.arguments += d.function?.arguments ?? ""
    }
    if (choice.finish_reason) finish = choice.finish_reason
  }
  return { content, calls, finish }
}

/** A request on a fresh connection that is closed after the response (no keep-alive pool). */
export const oneShot = (path: string) =>
  Effect.flatMap(Emulator.Emulator, (emulator) =>
    Effect.callback<number>((resume) => {
      const request = Http.get(`${emulator.url}${path}`, {
        agent: false,
        headers: { authorization: `Bearer ${emulator.apiKey}` }
      }, (response) => {
        response.resume()
        response.on("end", () => resume(Effect.succeed(response.statusCode ?? 0)))
      })
      request.on("error", (error) => resume(Effect.die(error)))
    }))

/** A streamed chat request whose body is read incrementally; `abort` drops the connection. */
export const openStream = (body: Record<string, unknown>) =>
  Effect.flatMap(Emulator.Emulator, (emulator) =>
    Effect.tryPromise(async () => {
      const controller = new AbortController()
      const response = await fetch(
        `${emulator.url}/v1/chat/completions`,
        init(emulator, { body: { model: "gpt-4o-mini", stream: true, ...body }, signal: controller.signal })
      )
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let text = ""
      /** Reads until at least `n` events have arrived; returns everything read so far. */
      const readEvents = async (n: number) => {
        while (events(text).length < n) {
          const { done, value } = await reader.read()
          if (done) break
          text += decoder.decode(value, { stream: true })
        }
        return text
      }
      return { response, readEvents, abort: () => controller.abort() }
    }))
