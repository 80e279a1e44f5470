/**
 * The endpoints, one handler each, routed with `HttpRouter`.
 *
 * @internal
 */
import * as Protocol from "@switchboard/core/Protocol"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Chat from "./chat.js"
import * as Embeddings from "./embeddings.js"
import { ApiError, fileNotFound, modelNotFound, taskNotFound } from "./errors.js"
import * as Files from "./files.js"
import * as ImageGeneration from "./imageGeneration.js"
import * as Images from "./images.js"
import { decode, Incoming, isRecord } from "./incoming.js"
import * as Minimal from "./minimal.js"
import * as Models from "./models.js"
import * as Moderation from "./moderation.js"
import * as Parameters from "./parameters.js"
import * as Streaming from "./streaming.js"
import * as VideoTasks from "./videoTasks.js"

const json = (body: unknown) => HttpServerResponse.jsonUnsafe(body)

/** A reply as it is, or cut down to the contract's fields in minimal mode. */
const reply = <A extends Readonly<Record<string, unknown>>>(body: A, minimal: (body: A) => unknown) =>
  Effect.map(Incoming, (incoming) => json(incoming.minimal ? minimal(body) : body))

const listModels = Effect.suspend(() => reply(Models.list(), Minimal.models))

const retrieveModel = Effect.gen(function*() {
  const { model = "" } = yield* HttpRouter.params
  const found = Models.list().data.find((m) => m.id === model)
  return found ? json(found) : yield* Effect.fail(modelNotFound(model))
})

const streamed = Effect.fnUntraced(function*(replies: ReadonlyArray<Chat.Reply>, meta: Chat.Meta, request: Protocol.ChatRequest) {
  const incoming = yield* Incoming
  const payloads = Streaming.events(replies, meta, {
    chunkSize: incoming.chunkSize,
    includeUsage: request.stream_options?.include_usage === true,
    minimal: incoming.minimal
  })
  // CutStream ends the body early and drops the connection with it.
  const cut = incoming.streamFault?._tag === "CutStream" ? { connection: "close" } : {}
  return HttpServerResponse.stream(Streaming.sse(payloads, incoming.streamFault, incoming.interval), {
    contentType: "text/event-stream",
    headers: { "cache-control": "no-cache", ...cut }
  })
})

/** The replies by model kind (`n` choices for chat, `n` images in one reply for image2); a video submission's completion id is its task id. */
const replyFor = Effect.fnUntraced(function*(request: Protocol.ChatRequest) {
  const { baseUrl, seq, tasks } = yield* Incoming
  const chatId = `chatcmpl-${String(seq).padStart(6, "0")}`
  const invalid = Images.validate(request.messages)
  if (invalid) return yield* Effect.fail(invalid)
  switch (Models.kindOf(request.model)) {
    case "image":
      return { id: chatId, replies: [Chat.textReply(request, ImageGeneration.content(request, baseUrl))] }
    case "video": {
      const taskId = tasks.submit(request, seq)
      return { id: taskId, replies: [Chat.textReply(request, VideoTasks.submitted(request, taskId))] }
    }
    default: {
      const replies = Chat.replies(request)
      return replies instanceof ApiError ? yield* Effect.fail(replies) : { id: chatId, replies }
    }
  }
})

const chatCompletions = Effect.gen(function*() {
  const request = yield* decode(Protocol.ChatRequest, ["chat", "image", "video"], "/v1/chat/completions")
  yield* Parameters.check
  const { id, replies } = yield* replyFor(request)
  const created = Math.floor((yield* Clock.currentTimeMillis) / 1000)
  const meta = { id, created, model: request.model }
  return request.stream === true
    ? yield* streamed(replies, meta, request)
    : yield* reply(Chat.completion(replies, meta), Minimal.completion)
})

const taskStatus = Effect.gen(function*() {
  const request = yield* decode(Protocol.TaskStatusRequest, [], "/v1/chat/task/status")
  const { baseUrl, tasks } = yield* Incoming
  const status = tasks.poll(request.task_id, baseUrl)
  return status ? yield* reply(status, Minimal.taskStatus) : yield* Effect.fail(taskNotFound(request.task_id))
})

/** Generated media; deliberately outside /v1 and keyless, like the real service's result links. */
const file = Effect.gen(function*() {
  const { name = "" } = yield* HttpRouter.params
  const found = Files.lookup(name)
  return found
    ? HttpServerResponse.uint8Array(found.body, { contentType: found.contentType })
    : yield* Effect.fail(fileNotFound(name))
})

// Core's schema only knows "float"; clients such as openai-node ask for base64 by default.
const withoutBase64 = (value: unknown) => {
  if (!isRecord(value) || value["encoding_format"] !== "base64") return value
  const { encoding_format: _, ...rest } = value
  return rest
}

const embeddings = Effect.gen(function*() {
  const { body } = yield* Incoming
  const base64 = body._tag === "Json" && isRecord(body.value) && body.value["encoding_format"] === "base64"
  const request = yield* decode(Protocol.EmbeddingRequest, ["embedding"], "/v1/embeddings", withoutBase64)
  yield* Parameters.checkEmbedding
  return yield* reply(Embeddings.response(request, base64 ? "base64" : "float"), Minimal.embeddings)
})

const moderations = Effect.flatMap(
  decode(Protocol.ModerationRequest, ["moderation"], "/v1/moderations"),
  (request) => reply(Moderation.response(request), Minimal.moderation)
)

/** The routes, as a layer for `HttpRouter.toHttpEffect`; their handlers need `Incoming`. */
export const layer = HttpRouter.addAll([
  HttpRouter.route("GET", "/v1/models", listModels),
  HttpRouter.route("GET", "/v1/models/:model", retrieveModel),
  HttpRouter.route("POST", "/v1/chat/completions", chatCompletions),
  HttpRouter.route("POST", "/v1/embeddings", embeddings),
  HttpRouter.route("POST", "/v1/moderations", moderations),
  HttpRouter.route("POST", "/v1/chat/task/status", taskStatus),
  HttpRouter.route("GET", "/files/:name", file)
])
