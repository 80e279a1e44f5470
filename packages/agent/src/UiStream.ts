/**
 * A chat or an agent run as the AI SDK's UI message stream (protocol v1,
 * what `useChat` reads): one message per response, a step per model call,
 * text parts with ids, tool parts keyed by the call id, `finish` with the
 * finish reason and the usage as message metadata. A failure becomes an
 * `error` part: the stream always ends with `finish` or `error`, then
 * `data: [DONE]`. Also the run as plain SSE (one named event per
 * `AgentEvent`) and as plain text.
 *
 * @since 1.1.0
 */
import * as Images from "@switchboard/core/Images"
import type * as Protocol from "@switchboard/core/Protocol"
import type * as TaskPoller from "@switchboard/core/TaskPoller"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { AgentEvent, AgentResult, ToolResult } from "./Agent.js"
import * as RunText from "./internal/runText.js"

/**
 * The parts this module writes (a subset of the AI SDK's `UIMessageChunk`).
 *
 * @since 1.1.0
 * @category models
 */
export type UiPart =
  | { readonly type: "start"; readonly messageId?: string }
  | { readonly type: "start-step" }
  | { readonly type: "finish-step" }
  | { readonly type: "text-start"; readonly id: string }
  | { readonly type: "text-delta"; readonly id: string; readonly delta: string }
  | { readonly type: "text-end"; readonly id: string }
  | { readonly type: "tool-input-available"; readonly toolCallId: string; readonly toolName: string; readonly input: unknown }
  | { readonly type: "tool-approval-request"; readonly approvalId: string; readonly toolCallId: string }
  | { readonly type: "tool-output-available"; readonly toolCallId: string; readonly output: unknown }
  | { readonly type: "tool-output-error"; readonly toolCallId: string; readonly errorText: string }
  | { readonly type: "tool-output-denied"; readonly toolCallId: string }
  | { readonly type: "file"; readonly url: string; readonly mediaType: string }
  | { readonly type: `data-${string}`; readonly id?: string; readonly data: unknown }
  | { readonly type: "finish"; readonly finishReason: FinishReason; readonly messageMetadata: Metadata }
  | { readonly type: "error"; readonly errorText: string }

/**
 * Why a UI message ended, in the AI SDK's words (`tool-calls` for a run
 * paused for approval).
 *
 * @since 1.1.0
 * @category models
 */
export type FinishReason = "stop" | "length" | "content-filter" | "tool-calls" | "error" | "other"

/**
 * The `finish` part's metadata: usage in the AI SDK's names, and the
 * service's own.
 *
 * @since 1.1.0
 * @category models
 */
export interface Metadata {
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly totalTokens: number }
  readonly status?: AgentResult["status"]
}

/**
 * What the mapping takes: the message id, the text of an error part, and
 * whether the run was resumed (its first step is not shown again).
 *
 * @since 1.1.0
 * @category models
 */
export interface Options {
  /** The assistant message's id in `start`; with a resumed run, the id of the message it continues. */
  readonly messageId?: string | undefined
  /**
   * The `errorText` of a failure. Default: `"The request failed."` for
   * every error, so nothing of the server (a key, an address, a stack)
   * reaches the page.
   */
  readonly errorText?: ((error: unknown) => string) | undefined
  /**
   * A resumed run: its first step answers calls the page already shows, so
   * only their results are written (no new step, no repeated inputs).
   */
  readonly resumed?: boolean | undefined
}

/**
 * The text of an `error` part unless `errorText` says otherwise: nothing
 * of the error, its key or its URLs reaches the page.
 *
 * @since 1.1.0
 * @category constants
 */
export const genericErrorText = "The request failed."

/**
 * The response headers of the UI message stream.
 *
 * @since 1.1.0
 * @category constants
 */
export const headers: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "connection": "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no"
}

const usageOf = (usage: Protocol.Usage | undefined): Metadata["usage"] =>
  usage === undefined ? undefined : {
    inputTokens: usage.prompt_tokens,
    outputTokens: usage.completion_tokens,
    totalTokens: usage.total_tokens
  }

const finishReason = (reason: string | null | undefined): FinishReason => {
  switch (reason) {
    case "stop":
    case "length":
      return reason
    case "tool_calls":
      return "tool-calls"
    case "content_filter":
      return "content-filter"
    default:
      return reason ? "other" : "stop"
  }
}

/** A JSON value when the text is JSON, else the text: what the page shows as the input or output. */
const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const errorOf = (content: string): string => {
  const value = parsed(content)
  const error = typeof value === "object" && value !== null ? (value as { error?: unknown }).error : undefined
  return typeof error === "string" ? error : content
}

/** The part of a finished call. */
const outputPart = (result: ToolResult): UiPart =>
  result.outcome === "success"
    ? { type: "tool-output-available", toolCallId: result.callId, output: parsed(result.content) }
    : result.outcome === "denied"
    ? { type: "tool-output-denied", toolCallId: result.callId }
    : { type: "tool-output-error", toolCallId: result.callId, errorText: errorOf(result.content) }

/**
 * Where the mapping writes a response's parts: as part objects
 * (`PartsOut`), or as the SSE frames of the served stream (`FramesOut`),
 * which writes the frequent ones without a part object.
 */
interface Out {
  part(part: UiPart): void
  startStep(): void
  finishStep(): void
  textStart(id: string): void
  textDelta(id: string, delta: string): void
  textEnd(id: string): void
}

class PartsOut implements Out {
  readonly parts: Array<UiPart> = []
  part(part: UiPart) {
    this.parts.push(part)
  }
  startStep() {
    this.parts.push({ type: "start-step" })
  }
  finishStep() {
    this.parts.push({ type: "finish-step" })
  }
  textStart(id: string) {
    this.parts.push({ type: "text-start", id })
  }
  textDelta(id: string, delta: string) {
    this.parts.push({ type: "text-delta", id, delta })
  }
  textEnd(id: string) {
    this.parts.push({ type: "text-end", id })
  }
}

const frame = (part: UiPart) => `data: ${JSON.stringify(part)}\n\n`

const startStepFrame = frame({ type: "start-step" })
const finishStepFrame = frame({ type: "finish-step" })
const doneFrame = "data: [DONE]\n\n"

/**
 * The frames of a batch as one string, the same bytes as `frame` of each
 * part: a text part's frame prefix is made once, and a delta's frame only
 * quotes its text (`JSON.stringify` of a string escapes as within an object).
 */
class FramesOut implements Out {
  text = ""
  private deltaPrefix = ""
  part(part: UiPart) {
    this.text += frame(part)
  }
  startStep() {
    this.text += startStepFrame
  }
  finishStep() {
    this.text += finishStepFrame
  }
  textStart(id: string) {
    const quoted = JSON.stringify(id)
    this.deltaPrefix = `data: {"type":"text-delta","id":${quoted},"delta":`
    this.text += `data: {"type":"text-start","id":${quoted}}\n\n`
  }
  textDelta(_id: string, delta: string) {
    this.text += `${this.deltaPrefix}${JSON.stringify(delta)}}\n\n`
  }
  textEnd(id: string) {
    this.text += `data: {"type":"text-end","id":${JSON.stringify(id)}}\n\n`
  }
}

/** Writes the parts of one response, keeping the order rules (a step and a text part open before their content, closed after). */
class Writer {
  private step = false
  private text: string | undefined = undefined
  private texts = 0
  constructor(readonly prefix: string) {}
  openStep(out: Out) {
    if (!this.step) out.startStep()
    this.step = true
  }
  closeText(out: Out) {
    if (this.text !== undefined) out.textEnd(this.text)
    this.text = undefined
  }
  delta(out: Out, delta: string) {
    this.openStep(out)
    if (this.text === undefined) {
      this.text = `${this.prefix}${this.texts++}`
      out.textStart(this.text)
    }
    out.textDelta(this.text, delta)
  }
  closeStep(out: Out) {
    this.closeText(out)
    if (this.step) out.finishStep()
    this.step = false
  }
}

const startPart = (options: Options): UiPart =>
  options.messageId === undefined ? { type: "start" } : { type: "start", messageId: options.messageId }

/** `error` for a failure, with the text the options allow. */
const failurePart = (options: Options) => (error: unknown): UiPart => ({
  type: "error",
  errorText: options.errorText === undefined ? genericErrorText : safeText(options.errorText, error)
})

const safeText = (errorText: (error: unknown) => string, error: unknown) => {
  try {
    return errorText(error)
  } catch {
    return genericErrorText
  }
}

/** Writes the parts of one agent event to `out`. */
const agentParts = (writer: Writer, options: Options, event: AgentEvent<unknown>, out: Out): void => {
  const replay = options.resumed === true && "step" in event && event.step === 0
  switch (event._tag) {
    case "TextDelta":
      writer.delta(out, event.text)
      break
    case "ToolCallStarted":
      if (replay) break
      writer.closeText(out)
      writer.openStep(out)
      out.part({ type: "tool-input-available", toolCallId: event.callId, toolName: event.name, input: parsed(event.arguments) })
      break
    case "ToolResult":
      out.part(outputPart(event.result))
      break
    case "StepFinished":
      if (options.resumed === true && event.step.index === 0) break
      writer.openStep(out)
      writer.closeStep(out)
      break
    case "Finished":
      finishedParts(writer, event.result, out)
  }
}

/** A paused run's last step: its calls, and an approval request for each pending one; then `finish`. */
const finishedParts = (writer: Writer, result: AgentResult<unknown>, out: Out): void => {
  if (result.status === "paused") {
    writer.closeText(out)
    writer.openStep(out)
    for (const call of result.message.tool_calls ?? []) {
      out.part({ type: "tool-input-available", toolCallId: call.id, toolName: call.function.name, input: parsed(call.function.arguments) })
    }
    for (const pending of result.pending) {
      // The agent's approval id (bound to the call's id, tool and arguments) is the page's.
      out.part({ type: "tool-approval-request", approvalId: pending.approvalId, toolCallId: pending.callId })
    }
  }
  writer.closeStep(out)
  const usage = usageOf(result.usage)
  out.part({
    type: "finish",
    finishReason: result.status === "paused" ? "tool-calls" : "stop",
    messageMetadata: { status: result.status, ...(usage === undefined ? {} : { usage }) }
  })
}

/**
 * An agent run (`Agent.stream`) as UI message parts. The stream does not
 * fail: the run's error becomes an `error` part after what was written.
 *
 * @since 1.1.0
 * @category constructors
 */
export const fromAgent = <A, E, R>(
  events: Stream.Stream<AgentEvent<A>, E, R>,
  options: Options = {}
): Stream.Stream<UiPart, never, R> =>
  Stream.make<[UiPart]>(startPart(options)).pipe(
    // A chunk of events at a time: the parts of a chunk are written as one.
    Stream.concat(Stream.mapAccumArray(events as Stream.Stream<AgentEvent<unknown>, E, R>, () => new Writer("text-"), (writer, chunk) => {
      const out = new PartsOut()
      for (const event of chunk) agentParts(writer, options, event, out)
      return [writer, out.parts] as const
    })),
    Stream.catchCause((cause) => Stream.make(failurePart(options)(causeError(cause))))
  )

/**
 * An agent run straight to the UI message stream's bytes: the bytes of
 * `encode(fromAgent(events, options))`, written without part objects, one
 * string and one encoding a read. Given the stream `Agent.stream` or
 * `Agent.resumeStream` returns, as it is, the run writes each event's
 * frames as it comes (no queue between them; past 64 K characters unread
 * it waits for a read); given any other stream of events, a chunk of them
 * at a time. `onFinished` runs with the run's result before the frames of
 * its finish are written (`UiServer` keeps a paused run there).
 *
 * @since 1.1.0
 * @category encoding
 */
export const encodeAgent = <A, E, R, R2 = never>(
  events: Stream.Stream<AgentEvent<A>, E, R>,
  options: Options & { readonly onFinished?: ((result: AgentResult<A>) => Effect.Effect<void, never, R2>) | undefined } = {}
): Stream.Stream<Uint8Array, never, R | R2> =>
  RunText.written(events, () => new AgentFrames(options as AgentFramesOptions<R2>))

type AgentFramesOptions<R2> = Options & {
  readonly onFinished?: ((result: AgentResult<unknown>) => Effect.Effect<void, never, R2>) | undefined
}

/** The UI message stream's frames of a run: `start`, the events' parts, `finish` or `error`, `[DONE]`. */
class AgentFrames<R2> extends FramesOut implements RunText.TextWriter<R2> {
  private readonly writer = new Writer("text-")
  constructor(private readonly options: AgentFramesOptions<R2>) {
    super()
    this.text = frame(startPart(options))
  }
  event(event: AgentEvent<unknown>) {
    const onFinished = this.options.onFinished
    if (event._tag === "Finished" && onFinished !== undefined) {
      // A paused run is kept before the frames of its finish are written.
      return Effect.map(onFinished(event.result), () => agentParts(this.writer, this.options, event, this))
    }
    agentParts(this.writer, this.options, event, this)
    return undefined
  }
  end(cause: Cause.Cause<unknown> | undefined) {
    this.text += cause === undefined ? doneFrame : frame(failurePart(this.options)(causeError(cause))) + doneFrame
  }
}

const causeError = (cause: Cause.Cause<unknown>): unknown => {
  const failure = cause.reasons.find((reason) => reason._tag === "Fail")
  return failure?._tag === "Fail" ? failure.error : cause
}

/**
 * A chat reply (`Chat.stream`) as UI message parts: one step, its text,
 * `finish` with the reason and usage. For `image2`, the images found in the
 * reply follow as `file` parts.
 *
 * @since 1.1.0
 * @category constructors
 */
export const fromChat = <E, R>(
  chunks: Stream.Stream<Protocol.ChatCompletionChunk, E, R>,
  options: Options & { readonly images?: boolean | undefined } = {}
): Stream.Stream<UiPart, never, R> =>
  Stream.make<[UiPart]>(startPart(options)).pipe(
    Stream.concat(Stream.mapAccumArray(chunks, () => new ChatState(), (state, chunk) => {
      const out = new PartsOut()
      for (const c of chunk) state.add(c, out)
      return [state, out.parts] as const
    }, { onHalt: (state) => state.end(options.images === true) })),
    Stream.catchCause((cause) => Stream.make(failurePart(options)(causeError(cause))))
  )

/** One reply being written: its text so far, usage and finish reason. */
class ChatState {
  private readonly writer = new Writer("text-")
  private text = ""
  private usage: Protocol.Usage | undefined = undefined
  private reason: string | null | undefined = undefined
  add(chunk: Protocol.ChatCompletionChunk, out: Out) {
    if (chunk.usage) this.usage = chunk.usage
    const choice = chunk.choices[0]
    if (choice?.finish_reason) this.reason = choice.finish_reason
    const delta = choice?.delta.content
    if (delta) {
      this.text += delta
      this.writer.delta(out, delta)
    }
  }
  end(images: boolean): ReadonlyArray<UiPart> {
    const out = new PartsOut()
    this.writer.openStep(out)
    this.writer.closeText(out)
    if (images) {
      for (const image of Images.parseImages(this.text)) {
        out.part({ type: "file", url: image.url, mediaType: image.mediaType ?? mediaTypeOf(image.url) })
      }
    }
    this.writer.closeStep(out)
    const usage = usageOf(this.usage)
    out.part({ type: "finish", finishReason: finishReason(this.reason), messageMetadata: usage === undefined ? {} : { usage } })
    return out.parts
  }
}

const imageTypes: ReadonlyArray<readonly [RegExp, string]> = [
  [/\.jpe?g$/i, "image/jpeg"],
  [/\.webp$/i, "image/webp"],
  [/\.gif$/i, "image/gif"]
]

/** By the address's extension; PNG, what `image2` makes, otherwise. */
const mediaTypeOf = (url: string): string => {
  const path = url.split(/[?#]/)[0]!
  return imageTypes.find(([pattern]) => pattern.test(path))?.[1] ?? "image/png"
}

/**
 * A video task's progress as `data-video` parts (one id per task, so the
 * page replaces the part in place), between `start` and `finish`.
 *
 * @since 1.1.0
 * @category constructors
 */
export const fromVideoProgress = <E, R>(
  updates: Stream.Stream<TaskPoller.TaskUpdate, E, R>,
  options: Options & { readonly taskId: string }
): Stream.Stream<UiPart, never, R> =>
  Stream.make<[UiPart]>(startPart(options)).pipe(
    Stream.concat(Stream.map(updates, (update): UiPart => ({ type: "data-video", id: options.taskId, data: videoData(update) }))),
    Stream.concat(Stream.make<[UiPart]>({ type: "finish", finishReason: "stop", messageMetadata: {} })),
    Stream.catchCause((cause) => Stream.make(failurePart(options)(causeError(cause))))
  )

/** What the page may see of an update: no reply body (it may hold server details). */
const videoData = (update: TaskPoller.TaskUpdate) =>
  update._tag === "InProgress"
    ? { status: update.status, progress: update.progress }
    : update._tag === "Succeeded"
    ? { status: "succeeded", videoUrl: update.videoUrl }
    : { status: "failed" }

/**
 * The parts as SSE frames (`data: <json>`), closed by `data: [DONE]`.
 *
 * @since 1.1.0
 * @category encoding
 */
export const encode = <E, R>(parts: Stream.Stream<UiPart, E, R>): Stream.Stream<Uint8Array, E, R> =>
  parts.pipe(
    // One write per chunk of parts, not per part.
    Stream.mapArray((chunk) => [chunk.map(frame).join("")] as const),
    Stream.concat(Stream.make(doneFrame)),
    Stream.encodeText
  )

/**
 * The run as plain SSE: one event per `AgentEvent`, named by its `_tag`
 * (`event: TextDelta`), its data the event as JSON; a failure is an
 * `event: error` with the error text of `options`.
 *
 * @since 1.1.0
 * @category encoding
 */
export const agentSse = <A, E, R>(
  events: Stream.Stream<AgentEvent<A>, E, R>,
  options: Pick<Options, "errorText"> = {}
): Stream.Stream<Uint8Array, never, R> => RunText.written(events, () => new SseEvents(options))

class SseEvents implements RunText.TextWriter<never> {
  text = ""
  constructor(private readonly options: Pick<Options, "errorText">) {}
  event(event: AgentEvent<unknown>) {
    this.text += `event: ${event._tag}\ndata: ${JSON.stringify(event)}\n\n`
    return undefined
  }
  end(cause: Cause.Cause<unknown> | undefined) {
    if (cause !== undefined) this.text += `event: error\ndata: ${JSON.stringify({ errorText: errorTextOf(this.options, cause) })}\n\n`
  }
}

/**
 * The run's text only, as UTF-8 (`text/plain`); a failure ends it with a
 * line `[error] <text>`.
 *
 * @since 1.1.0
 * @category encoding
 */
export const agentText = <A, E, R>(
  events: Stream.Stream<AgentEvent<A>, E, R>,
  options: Pick<Options, "errorText"> = {}
): Stream.Stream<Uint8Array, never, R> => RunText.written(events, () => new PlainText(options))

class PlainText implements RunText.TextWriter<never> {
  text = ""
  constructor(private readonly options: Pick<Options, "errorText">) {}
  event(event: AgentEvent<unknown>) {
    if (event._tag === "TextDelta") this.text += event.text
    return undefined
  }
  end(cause: Cause.Cause<unknown> | undefined) {
    if (cause !== undefined) this.text += `\n[error] ${errorTextOf(this.options, cause)}\n`
  }
}

/** The text of the `error` a failure is written as. */
const errorTextOf = (options: Pick<Options, "errorText">, cause: Cause.Cause<unknown>): string =>
  (failurePart(options)(causeError(cause)) as { readonly errorText: string }).errorText
