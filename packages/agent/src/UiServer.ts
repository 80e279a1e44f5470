/**
 * HTTP handlers that serve a chat or an agent to a page using `useChat`
 * (the AI SDK's UI message stream, `UiStream`), for Node (`HttpRouter`,
 * `HttpServer`) and for anything that takes a web `Request` and returns a
 * `Response` (`toWebHandler`).
 *
 * - A body that is not a UI chat is answered 400 with `{ "error": { "field",
 *   "message" } }` before anything is sent to the service.
 * - A tool that needs approval ends the response with `tool-approval-request`
 *   and the paused run is kept in the `ApprovalStore` under the chat id; the
 *   next request with the user's response resumes it from the stored
 *   transcript (not the one the page sends). A response for a call that is
 *   not pending is answered 409 and no tool runs.
 * - A client that goes away interrupts the run, and with it the exchange
 *   with the service.
 *
 * @since 1.1.0
 */
import * as Chat from "@switchboard/core/Chat"
import * as HttpWire from "@switchboard/core/HttpWire"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Channel from "effect/Channel"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Agent from "./Agent.js"
import * as WebBody from "./internal/webBody.js"
import type { Transcript } from "./Transcript.js"
import * as UiMessage from "./UiMessage.js"
import * as UiStream from "./UiStream.js"

/**
 * A run paused for approval: what resuming it needs.
 *
 * @since 1.1.0
 * @category models
 */
export interface Paused {
  readonly transcript: Transcript
  readonly usage: Protocol.Usage
  /** The paused run's span, so that the resumed run is in the same trace. */
  readonly trace: Agent.TraceContext
  /** The approval ids awaiting a decision (`PendingApproval.approvalId`). */
  readonly pending: ReadonlyArray<string>
}

/**
 * Paused runs by chat id. `take` gives the run back (and forgets it) only
 * when every approval id given is pending in it, so a response for a call
 * that is not pending, or a second response to the same request, finds
 * nothing.
 *
 * @since 1.1.0
 * @category services
 */
export class ApprovalStore extends Context.Service<ApprovalStore, {
  readonly put: (chatId: string, paused: Paused) => Effect.Effect<void>
  readonly take: (chatId: string, approvalIds: ReadonlyArray<string>) => Effect.Effect<Paused | undefined>
}>()("@switchboard/agent/UiServer/ApprovalStore") {}

/**
 * In this process's memory, at most `maxChats` (default 10,000) paused
 * runs, the oldest forgotten first.
 *
 * @since 1.1.0
 * @category layers
 */
export const layerMemory = (options: { readonly maxChats?: number | undefined } = {}): Layer.Layer<ApprovalStore> =>
  Layer.sync(ApprovalStore, () => {
    const max = options.maxChats ?? 10_000
    const runs = new Map<string, Paused>()
    return {
      put: (chatId, paused) =>
        Effect.sync(() => {
          runs.delete(chatId)
          runs.set(chatId, paused)
          if (runs.size > max) runs.delete(runs.keys().next().value!)
        }),
      take: (chatId, approvalIds) =>
        Effect.sync(() => {
          const paused = runs.get(chatId)
          if (paused === undefined || !approvalIds.every((id) => paused.pending.includes(id))) return undefined
          runs.delete(chatId)
          return paused
        })
    }
  })

/**
 * What every handler takes: the body limits and the text of an error part.
 *
 * @since 1.1.0
 * @category models
 */
export interface ServeOptions {
  /** Body size and message count limits (`UiMessage.defaultLimits`). */
  readonly limits?: UiMessage.Limits | undefined
  /** The `errorText` of a failure mid-stream; default generic (`UiStream.genericErrorText`). */
  readonly errorText?: ((error: unknown) => string) | undefined
}

/**
 * What `agent` takes: the run's options (model, toolkit, limits) and how to
 * key a chat's paused run.
 *
 * @since 1.1.0
 * @category models
 */
export interface AgentServeOptions<T extends Agent.AnyTools, A = undefined, I = A>
  extends Omit<Agent.RunOptions<T, A, I>, "messages">, ServeOptions
{
  /** Messages put before the page's (a system prompt, say). */
  readonly instructions?: ReadonlyArray<Protocol.Message> | undefined
  /**
   * The `ApprovalStore` key of a request's paused run. Default: the chat id
   * the page sends. With signed-in users, add the user (from the request's
   * session), so that nobody can answer another user's approval by sending
   * their chat id.
   */
  readonly chatKey?: ((chatId: string, request: HttpServerRequest.HttpServerRequest) => string) | undefined
}

const jsonError = (status: number, field: string, message: string) =>
  HttpServerResponse.jsonUnsafe({ error: { field, message } }, { status })

/**
 * The body as text, refused once past `maxBytes` without reading the rest:
 * one stage over the request's bytes and one decoding (`HttpWire.readUpTo`).
 */
const readBody = (maxBytes: number) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request): Effect.Effect<Result.Result<string, UiMessage.InvalidUiRequest>> => {
    const declared = Number(request.headers["content-length"])
    if (Number.isFinite(declared) && declared > maxBytes) return Effect.succeed(Result.fail(tooLarge(maxBytes)))
    return HttpWire.readUpTo(request.stream, maxBytes).pipe(
      Effect.map(({ size, text }) => size > maxBytes ? Result.fail(tooLarge(maxBytes)) : Result.succeed(text)),
      Effect.orElseSucceed(() => Result.fail(new UiMessage.InvalidUiRequest({ field: "body", message: "could not be read" })))
    )
  })

const tooLarge = (maxBytes: number) =>
  new UiMessage.InvalidUiRequest({ field: "body", message: `is larger than the limit of ${maxBytes} bytes` })

/** The request decoded, or the 400 that answers it. */
const decodeRequest = (limits: UiMessage.Limits = {}) =>
  Effect.map(
    readBody(limits.maxBodyBytes ?? UiMessage.defaultLimits.maxBodyBytes),
    (text) => Result.flatMap(text, (body) => UiMessage.decode(body, limits))
  )

const sse = <R>(body: Stream.Stream<Uint8Array, never, R>) =>
  Effect.map(Effect.context<R>(), (context) => HttpServerResponse.stream(provided(body, context), { headers: UiStream.headers }))

/**
 * `Stream.provideContext`, its merged context made once per consumer
 * context rather than at every pull: each merge copies every service and
 * rebuilds the fiber's cached references.
 */
const provided = <A, E, R>(stream: Stream.Stream<A, E, R>, context: Context.Context<R>): Stream.Stream<A, E> => {
  let outer: Context.Context<never> | undefined
  let merged: Context.Context<R> = context
  const merge = (current: Context.Context<never>): Context.Context<R> => {
    if (current !== outer) {
      outer = current
      merged = withServices(current, context)
    }
    return merged
  }
  return Stream.fromChannel(Channel.fromTransform((upstream, scope) =>
    Effect.map(
      Effect.updateContext(Channel.toTransform(Stream.toChannel(stream))(upstream, scope), merge),
      (pull) => Effect.updateContext(pull, merge)
    )
  ))
}

/**
 * What `Context.merge(current, context)` looks up, as overlays on `current`
 * of only the services whose value it lacks: none when the body runs in the
 * handler's own context (as `toWebHandler`'s does), so the fiber keeps its
 * context and its cached references.
 */
const withServices = <R>(current: Context.Context<never>, context: Context.Context<R>): Context.Context<R> => {
  const have = current.mapUnsafe
  let out: Context.Context<R> = current as Context.Context<R>
  for (const [key, value] of context.mapUnsafe) {
    if (have.get(key) !== value) out = Context.addUnsafe(out, key, value)
  }
  return out
}

/**
 * Serves an agent: each POST of `useChat` runs (or resumes) the agent on the
 * page's conversation and answers with the UI message stream.
 *
 * @example
 * ```ts
 * import * as UiServer from "@switchboard/agent/UiServer"
 * import * as Toolkit from "effect/ai/Toolkit"
 *
 * const toolkit = Toolkit.make()
 * // POST /api/chat of a server; `UiServer.toWebHandler` makes it a web `Request` → `Response` handler.
 * const handler = UiServer.agent({ model: "gpt-4o-mini", toolkit })
 * ```
 * @since 1.1.0
 * @category handlers
 */
export const agent = <T extends Agent.AnyTools, A = undefined, I = A, K extends Agent.AnyToolkit<T> = Agent.AnyToolkit<T>>(
  options: AgentServeOptions<T, A, I> & { readonly toolkit: K }
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | ApprovalStore | Agent.RequirementsOf<T, K>
> =>
{
  // Made once per handler, not per request.
  const { chatKey, errorText, instructions, limits, ...run } = options
  const decodeBody = decodeRequest(limits)
  const keyOf = (chatId: string) =>
    chatKey === undefined
      ? Effect.succeed(chatId)
      : Effect.map(HttpServerRequest.HttpServerRequest, (request) => chatKey(chatId, request))
  const respond = (request: UiMessage.Decoded, store: ApprovalStore["Service"], key: string) => {
    const keep = (result: Agent.AgentResult<A, T>) =>
      result.status === "paused"
        ? store.put(key, {
          transcript: result.transcript,
          usage: result.usage,
          trace: result.trace,
          pending: result.pending.map((p) => p.approvalId)
        })
        : Effect.void
    if (request.continues === undefined) {
      const events = Agent.stream({ ...run, messages: [...(instructions ?? []), ...request.messages] })
      return sse(UiStream.encodeAgent(events, { errorText, onFinished: keep }))
    }
    const continues = request.continues
    const approvalIds = Object.keys(request.decisions)
    return Effect.flatMap(store.take(key, approvalIds), (paused) => {
      if (paused === undefined) {
        const field = request.decisionFields[approvalIds[0]!] ?? "messages"
        return Effect.succeed(jsonError(409, field, "answers no pending approval of this chat"))
      }
      // From the stored transcript, not the page's: the page decides, it does not say what was asked.
      const events = Agent.resumeStream({
        ...run,
        transcript: paused.transcript,
        usage: paused.usage,
        trace: paused.trace,
        decisions: request.decisions
      })
      return sse(UiStream.encodeAgent(events, { messageId: continues, errorText, resumed: true, onFinished: keep }))
    })
  }
  return Effect.flatMap(decodeBody, (decoded) => {
    if (Result.isFailure(decoded)) return Effect.succeed(jsonError(400, decoded.failure.field, decoded.failure.message))
    const request = decoded.success
    return Effect.flatMap(ApprovalStore, (store) => Effect.flatMap(keyOf(request.chatId), (key) => respond(request, store, key)))
  })
}

/**
 * What `chat` takes: the model and the chat options of each request.
 *
 * @since 1.1.0
 * @category models
 */
export interface ChatServeOptions extends ServeOptions {
  readonly model: string
  readonly instructions?: ReadonlyArray<Protocol.Message> | undefined
  readonly maxTokens?: number | undefined
  /** Write the images of the reply as `file` parts (for `image2`). Default: when the model is `image2`. */
  readonly images?: boolean | undefined
}

/**
 * Serves a chat without tools: each POST streams one reply (`Chat.stream`).
 *
 * @since 1.1.0
 * @category handlers
 */
export const chat = (
  options: ChatServeOptions
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | Chat.Chat> =>
  Effect.gen(function*() {
    const decoded = yield* decodeRequest(options.limits)
    if (Result.isFailure(decoded)) return jsonError(400, decoded.failure.field, decoded.failure.message)
    const chunks = Chat.stream({
      model: options.model,
      messages: [...(options.instructions ?? []), ...decoded.success.messages],
      ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens })
    }, { includeUsage: true })
    return yield* sse(UiStream.encode(UiStream.fromChat(chunks, {
      errorText: options.errorText,
      images: options.images ?? options.model === "image2"
    })))
  })

/**
 * A web `Request` to a `Response` (named through `effect`, so this module
 * needs no DOM types).
 *
 * @since 1.1.0
 * @category models
 */
export type WebHandler = (request: Parameters<ReturnType<typeof HttpEffect.toWebHandler>>[0]) => ReturnType<ReturnType<typeof HttpEffect.toWebHandler>>

/**
 * A handler as a function from a web `Request` to a `Response` (for Deno,
 * Bun, Cloudflare Workers, Next.js route handlers), its services built once
 * from `layer`. An aborted request interrupts the run.
 *
 * @since 1.1.0
 * @category converting
 */
export const toWebHandler = <R, LE>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest>,
  layer: Layer.Layer<Exclude<R, HttpServerRequest.HttpServerRequest>, LE>
): { readonly handler: WebHandler; readonly dispose: () => Promise<void> } => {
  const built = HttpEffect.toWebHandlerLayerWith(layer, {
    toHandler: () =>
      Effect.succeed<Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>>(
        Effect.flatMap(handler, webBody) as Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
      )
  })
  // Every service comes from `layer`: nothing is left for a per-request context.
  return { handler: built.handler as WebHandler, dispose: built.dispose }
}

/**
 * A streamed body as our own `ReadableStream` (`internal/webBody.ts`: every
 * chunk made since the reader's last read in one), given the request's scope
 * and abort signal as `effect`'s web handler gives them to its own. The
 * request's scope is handed over to the body's fiber, which closes it when
 * the stream ends (what `HttpEffect.scopeTransferToStream` does with a stream
 * stage more).
 */
const webBody = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag !== "Stream" ? Effect.succeed(response) : Effect.withFiber((fiber) => {
    const body = response.body as HttpBody.Stream
    const scope = Context.getUnsafe(fiber.context, Scope.Scope) as Scope.Closeable
    HttpEffect.scopeDisableClose(scope)
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const signal = (request.source as { readonly signal?: WebBody.Signal }).signal
    return Effect.succeed(HttpServerResponse.setBody(
      response,
      HttpBody.raw(WebBody.toReadableStream(body.stream, fiber.context, signal, scope), {
        contentType: body.contentType,
        contentLength: body.contentLength
      })
    ))
  })
