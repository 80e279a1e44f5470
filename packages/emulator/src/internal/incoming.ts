/**
 * The request as the route handlers see it: read and recorded once by the
 * server, then decoded per endpoint with core's Protocol schemas.
 *
 * @internal
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Schema from "effect/Schema"
import type * as Http from "node:http"
import * as Errors from "./errors.js"
import type { StreamFault } from "./faults.js"
import * as Models from "./models.js"
import type * as VideoTasks from "./videoTasks.js"

/**
 * @internal
 */
export type Body =
  | { readonly _tag: "Json"; readonly value: unknown }
  | { readonly _tag: "Invalid"; readonly text: string }

/**
 * @internal
 */
export class Incoming extends Context.Service<Incoming, {
  readonly seq: number
  readonly body: Body
  readonly baseUrl: string
  readonly streamFault: StreamFault | undefined
  readonly chunkSize: number
  readonly interval: Duration.Duration
  readonly tasks: VideoTasks.Store
  /** Replies cut down to the contract's fields (`Options.minimal`). */
  readonly minimal: boolean
}>()("@switchboard/emulator/internal/Incoming") {}

/**
 * The body's text, or the 413 once it is announced or grows larger than
 * `limit` bytes. A body too large is never held: what is left of it is read
 * and dropped (node drops a body never read), so the 413 can still be sent
 * on the connection.
 */
export const read = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<string | Errors.ApiError> =>
  Effect.callback((resume) => {
    // The emulator's server is node:http, never HTTP/2.
    const node = NodeHttpServerRequest.toIncomingMessage(request) as Http.IncomingMessage
    if (Number(node.headers["content-length"]) > limit) return resume(Effect.succeed(Errors.tooLarge(limit)))
    const chunks: Array<Buffer> = []
    let bytes = 0
    let done = false
    const finish = (result: string | Errors.ApiError) => {
      if (done) return
      done = true
      chunks.length = 0
      resume(Effect.succeed(result))
    }
    node.on("data", (chunk: Buffer) => {
      if (done) return
      bytes += chunk.length
      if (bytes > limit) finish(Errors.tooLarge(limit))
      else chunks.push(chunk)
    })
    node.once("end", () => finish(Buffer.concat(chunks).toString("utf8")))
    // The client went away: nobody is left to read the reply.
    node.once("close", () => finish(""))
    node.once("error", () => finish(""))
  })

export const parseBody = (text: string): Body => {
  if (text.trim() === "") return { _tag: "Invalid", text }
  try {
    return { _tag: "Json", value: JSON.parse(text) as unknown }
  } catch {
    return { _tag: "Invalid", text }
  }
}

/** What `requests` shows: the JSON value, the raw text when it was not JSON, `null` when empty. */
export const recordedBody = (body: Body): unknown =>
  body._tag === "Json" ? body.value : body.text === "" ? null : body.text

export const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** An unknown model is a 404 and a model of another kind a 400, before the rest is checked. */
const checkModel = (value: unknown, kinds: ReadonlyArray<Models.ModelKind>, endpoint: string) => {
  const model = isRecord(value) ? value["model"] : undefined
  if (typeof model !== "string" || model === "") return Effect.void
  const kind = Models.kindOf(model)
  if (kind === undefined) return Effect.fail(Errors.modelNotFound(model))
  return kinds.includes(kind) ? Effect.void : Effect.fail(Errors.wrongModelKind(model, endpoint))
}

/** The body decoded with a Protocol schema, or the 400/404 naming what is wrong. */
export const decode = Effect.fnUntraced(function*<S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  kinds: ReadonlyArray<Models.ModelKind>,
  endpoint: string,
  prepare: (value: unknown) => unknown = (value) => value
): Effect.fn.Return<S["Type"], Errors.ApiError, Incoming> {
  const { body } = yield* Incoming
  if (body._tag === "Invalid") return yield* Effect.fail(Errors.invalidJson())
  yield* checkModel(body.value, kinds, endpoint)
  const decoded = Schema.decodeUnknownResult(schema, { errors: "all", reportInput: true })(prepare(body.value))
  return yield* Effect.mapError(Effect.fromResult(decoded), Errors.fromSchemaError)
})
