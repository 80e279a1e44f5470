/**
 * The conversation of a run as a `Schema` value: an array of protocol
 * messages that encodes to JSON and decodes back, so that a run can be saved
 * (for an approval, after a budget ran out) and resumed in another process.
 *
 * @since 0.1.0
 */
import * as Protocol from "@switchboard/core/Protocol"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * A run's messages in order, as the service takes them: what a paused run or
 * an error hands back for `resume`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Transcript = Schema.Array(Protocol.Message).annotate({ identifier: "Transcript" })

/**
 * A run's messages in order, as the service takes them: what a paused run or
 * an error hands back for `resume`.
 *
 * @since 0.1.0
 * @category models
 */
export type Transcript = typeof Transcript.Type

/**
 * The transcript as a JSON string.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TranscriptFromJson = Schema.fromJsonString(Transcript)

/**
 * Encodes a transcript as JSON text, to store a paused run.
 *
 * @since 0.1.0
 * @category encoding
 */
export const toJson: (transcript: Transcript) => Effect.Effect<string, Schema.SchemaError> = Schema.encodeEffect(
  TranscriptFromJson
)

/**
 * Decodes a stored transcript from JSON text, checking it against the
 * schema.
 *
 * @since 0.1.0
 * @category decoding
 */
export const fromJson: (json: string) => Effect.Effect<Transcript, Schema.SchemaError> = Schema.decodeEffect(
  TranscriptFromJson
)

/**
 * The calls of the last assistant message that no `tool` message answers yet
 * (a paused run, or one stopped by an error before its tools ran), with that
 * message; `undefined` when every call is answered.
 *
 * @since 0.1.0
 * @category getters
 */
export const unansweredCalls = (
  transcript: Transcript
): { readonly message: Protocol.AssistantMessage; readonly calls: ReadonlyArray<Protocol.ToolCall> } | undefined => {
  // Only tool messages may follow it: after a new user turn the calls are history.
  let index = transcript.length - 1
  while (index >= 0 && transcript[index]!.role === "tool") index--
  const message = transcript[index]
  if (message?.role !== "assistant" || !message.tool_calls?.length) return undefined
  const answered = new Set<string>()
  for (let i = index + 1; i < transcript.length; i++) {
    const m = transcript[i]!
    if (m.role === "tool") answered.add(m.tool_call_id)
  }
  const calls = message.tool_calls.filter((call) => !answered.has(call.id))
  return calls.length > 0 ? { message, calls } : undefined
}
