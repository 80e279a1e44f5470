/**
 * The steps of a script, written as what the service replies, never as raw
 * stream chunks: `ScriptedModel` turns each into the exact bytes the service
 * would send, a whole JSON reply for `Chat.create` or server-sent events for
 * `Chat.stream`, so one script serves both and survives protocol details.
 *
 * @example
 * ```ts
 * import * as Reply from "@switchboard/testing/Reply"
 *
 * const script = [
 *   Reply.toolCall("get_weather", { city: "Paris" }),
 *   Reply.error(503, { headers: { "retry-after": "2" } }),
 *   Reply.text("It is 18 °C in Paris.", { usage: { prompt_tokens: 12, completion_tokens: 8 } })
 * ]
 * ```
 *
 * @since 1.0.0
 */
import type * as Duration from "effect/Duration"
import type * as Protocol from "@switchboard/core/Protocol"

/**
 * What every step may add: a wait before the reply's head (on Effect's
 * `Clock`, so a `TestClock` controls it), a wait between stream events, and
 * a cut of the connection after some stream events (for `Chat.create`, the
 * body is cut, as a lost connection).
 *
 * @since 1.0.0
 * @category models
 */
export interface Timing {
  readonly delay?: Duration.Input | undefined
  readonly chunkDelay?: Duration.Input | undefined
  readonly cutAfter?: number | undefined
}

/**
 * Token counts; `total_tokens` defaults to their sum.
 *
 * @since 1.0.0
 * @category models
 */
export interface Usage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens?: number | undefined
}

/**
 * What a chat reply may say about itself.
 *
 * @since 1.0.0
 * @category models
 */
export interface ChatOptions extends Timing {
  readonly usage?: Usage | undefined
  readonly finishReason?: string | undefined
  /** The reply's `model`; default: the request's. */
  readonly model?: string | undefined
}

/**
 * One tool call: `arguments` is the value, sent as its JSON text.
 *
 * @since 1.0.0
 * @category models
 */
export interface ToolCall {
  readonly name: string
  readonly arguments: unknown
  /** Default `call_<call index>_<position>`. */
  readonly id?: string | undefined
}

/**
 * A video task's status, as the service reports it: a bare status
 * (`"queued"`, `"succeed"`, `"failed"`) or the whole reply.
 *
 * @since 1.0.0
 * @category models
 */
export type TaskStatus = string | {
  readonly status: string
  readonly video_url?: string | undefined
  readonly progress?: number | string | undefined
  readonly [key: string]: unknown
}

/**
 * What a function step is given: the call, its decoded request.
 *
 * @since 1.0.0
 * @category models
 */
export interface Call {
  /** 0 for the first call the script answered. */
  readonly index: number
  readonly method: string
  /** The path after `/v1`: `/chat/completions`, `/embeddings`, … */
  readonly path: string
  /** The headers sent (`traceparent`, per-call headers), but `authorization`. */
  readonly headers: Readonly<Record<string, string>>
  /** The request body, parsed (`undefined` for `GET /models`). */
  readonly request: unknown
  /** The request, when the call is a chat completion. */
  readonly chat: Protocol.ChatRequest | undefined
  /** Whether the caller asked for a stream. */
  readonly streamed: boolean
  /** The index of the step that answered it (`undefined` when none could). */
  readonly step: number | undefined
}

/**
 * A step of a script.
 *
 * @since 1.0.0
 * @category models
 */
export type Step =
  | { readonly _tag: "Text"; readonly content: string; readonly options: ChatOptions }
  | {
    readonly _tag: "ToolCalls"
    readonly calls: ReadonlyArray<ToolCall>
    readonly content: string | undefined
    readonly options: ChatOptions
  }
  | { readonly _tag: "Refusal"; readonly refusal: string; readonly options: ChatOptions }
  | { readonly _tag: "Image"; readonly urls: ReadonlyArray<string>; readonly options: ChatOptions }
  | { readonly _tag: "Video"; readonly taskId: string | undefined; readonly statuses: ReadonlyArray<TaskStatus>; readonly options: Timing }
  | { readonly _tag: "Embeddings"; readonly vectors: ReadonlyArray<ReadonlyArray<number>> | number; readonly options: Timing }
  | {
    readonly _tag: "Moderation"
    readonly flagged: boolean
    readonly scores: Readonly<Record<string, number>>
    readonly options: Timing
  }
  | { readonly _tag: "Models"; readonly ids: ReadonlyArray<string>; readonly options: Timing }
  | {
    readonly _tag: "Error"
    readonly status: number
    readonly body: unknown
    readonly headers: Readonly<Record<string, string>>
    readonly options: Timing
  }
  | { readonly _tag: "Respond"; readonly respond: (call: Call) => Step }

/**
 * A text answer (`finish_reason` `stop` unless told).
 *
 * @since 1.0.0
 * @category constructors
 */
export const text = (content: string, options: ChatOptions = {}): Step => ({ _tag: "Text", content, options })

/**
 * The model calls tools (`finish_reason` `tool_calls`). Each must be one the
 * request offers, or the call fails with `StepMismatchError`.
 *
 * @since 1.0.0
 * @category constructors
 */
export const toolCalls = (
  calls: ReadonlyArray<ToolCall>,
  options: ChatOptions & { readonly content?: string | undefined } = {}
): Step => ({ _tag: "ToolCalls", calls, content: options.content, options })

/**
 * One tool call.
 *
 * @since 1.0.0
 * @category constructors
 */
export const toolCall = (name: string, args: unknown, options: ChatOptions & { readonly id?: string | undefined } = {}): Step =>
  toolCalls([{ name, arguments: args, id: options.id }], options)

/**
 * The model refuses (`message.refusal`).
 *
 * @since 1.0.0
 * @category constructors
 */
export const refusal = (refusal: string, options: ChatOptions = {}): Step => ({ _tag: "Refusal", refusal, options })

/**
 * An `image2` reply: each URL (or data URI) as a markdown image.
 *
 * @since 1.0.0
 * @category constructors
 */
export const image = (urls: string | ReadonlyArray<string>, options: ChatOptions = {}): Step => ({
  _tag: "Image",
  urls: typeof urls === "string" ? [urls] : urls,
  options
})

/**
 * A video task: the submission gets `taskId` (default `task_<call index>`);
 * each status poll of that task gets the next status, the last one repeated.
 * A bare `"succeed"` gets a `video_url`.
 *
 * @since 1.0.0
 * @category constructors
 */
export const video = (
  options: Timing & { readonly taskId?: string | undefined; readonly statuses: ReadonlyArray<TaskStatus> }
): Step => ({ _tag: "Video", taskId: options.taskId, statuses: options.statuses, options })

/**
 * Embeddings: one vector per input, or a dimension count (vectors made from
 * each input's text, the same text giving the same vector).
 *
 * @since 1.0.0
 * @category constructors
 */
export const embeddings = (vectors: ReadonlyArray<ReadonlyArray<number>> | number, options: Timing = {}): Step => ({
  _tag: "Embeddings",
  vectors,
  options
})

/**
 * A moderation verdict, the same for every input.
 *
 * @since 1.0.0
 * @category constructors
 */
export const moderation = (
  verdict: { readonly flagged: boolean; readonly scores?: Readonly<Record<string, number>> | undefined },
  options: Timing = {}
): Step => ({ _tag: "Moderation", flagged: verdict.flagged, scores: verdict.scores ?? {}, options })

/**
 * The model list.
 *
 * @since 1.0.0
 * @category constructors
 */
export const models = (ids: ReadonlyArray<string>, options: Timing = {}): Step => ({ _tag: "Models", ids, options })

/**
 * An error reply: its status, its body (default: the service's error shape
 * with `message`) and headers such as `retry-after`. The SDK maps it as it
 * maps the service's (a 503 is retried, a 400 is not).
 *
 * @since 1.0.0
 * @category constructors
 */
export const error = (
  status: number,
  options: Timing & {
    readonly message?: string | undefined
    readonly body?: unknown
    readonly headers?: Readonly<Record<string, string>> | undefined
  } = {}
): Step => ({
  _tag: "Error",
  status,
  body: options.body ?? { error: { message: options.message ?? `scripted ${status}`, type: "scripted", code: null } },
  headers: options.headers ?? {},
  options
})

/**
 * A step computed from the call (its decoded request).
 *
 * @since 1.0.0
 * @category constructors
 */
export const respond = (f: (call: Call) => Step): Step => ({ _tag: "Respond", respond: f })

/**
 * `step`, after `duration` on Effect's `Clock`.
 *
 * @since 1.0.0
 * @category combinators
 */
export const delayed = (step: Step, duration: Duration.Input): Step => withTiming(step, { delay: duration })

/**
 * `step`, its connection cut after `chunks` stream events.
 *
 * @since 1.0.0
 * @category combinators
 */
export const cut = (step: Step, chunks: number): Step => withTiming(step, { cutAfter: chunks })

const withTiming = (step: Step, timing: Timing): Step =>
  step._tag === "Respond" ?
    { _tag: "Respond", respond: (call) => withTiming(step.respond(call), timing) } :
    { ...step, options: { ...step.options, ...timing } } as Step
