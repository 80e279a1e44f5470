/**
 * Minimal replies (`Options.minimal`): every reply cut down to the fields the
 * service contract shows (spec 2.6), so a client is tested against the bare
 * shapes a conforming server may send: no `index`, `object`, `created`,
 * `model`, `usage`, `role` or `finish_reason` on a completion; tool calls
 * without `type`; stream chunks and tool-call deltas without `index`.
 *
 * @internal
 */
import { isRecord } from "./incoming.js"

type Json = Readonly<Record<string, unknown>>

const pick = (value: Json, keys: ReadonlyArray<string>): Json => {
  const out: Record<string, unknown> = {}
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key]
  return out
}

const list = (value: unknown, each: (item: Json) => Json): ReadonlyArray<Json> =>
  Array.isArray(value) ? value.filter(isRecord).map(each) : []

const toolCall = (call: Json): Json => pick(call, ["id", "function"])

/** `{id, choices: [{message: {content, tool_calls?}}]}`. */
export const completion = (body: Json): Json => ({
  id: body["id"],
  choices: list(body["choices"], (choice) => {
    const message = isRecord(choice["message"]) ? choice["message"] : {}
    const calls = list(message["tool_calls"], toolCall)
    return { message: { content: message["content"], ...(calls.length > 0 ? { tool_calls: calls } : {}) } }
  })
})

/**
 * `{id, choices: [{delta: {content?, tool_calls?}, finish_reason?}]}`: the
 * contract shows no chunk. `keepIndex` keeps the choice's `index`, without
 * which the chunks of several choices (`n`) cannot be told apart.
 */
export const chunk = (body: Json, keepIndex = false): Json => ({
  id: body["id"],
  choices: list(body["choices"], (choice) => {
    const delta = isRecord(choice["delta"]) ? choice["delta"] : {}
    const calls = list(delta["tool_calls"], toolCall)
    return {
      ...(keepIndex ? pick(choice, ["index"]) : {}),
      delta: { ...pick(delta, ["content"]), ...(calls.length > 0 ? { tool_calls: calls } : {}) },
      ...(typeof choice["finish_reason"] === "string" ? { finish_reason: choice["finish_reason"] } : {})
    }
  })
})

/** `{data: [{embedding}]}`. */
export const embeddings = (body: Json): Json => ({ data: list(body["data"], (item) => pick(item, ["embedding"])) })

/** `{results: [{flagged, category_scores}]}`. */
export const moderation = (body: Json): Json => ({
  results: list(body["results"], (result) => pick(result, ["flagged", "category_scores"]))
})

/** `{data: [{id}]}`: the contract does not show the list's shape. */
export const models = (body: Json): Json => ({ data: list(body["data"], (model) => pick(model, ["id"])) })

/** `{status, video_url?}`. */
export const taskStatus = (body: Json): Json => pick(body, ["status", "video_url"])
