/**
 * The models the emulator serves and which endpoint each belongs to.
 *
 * @internal
 */

/** What a model can be used for; decides which endpoint accepts it. */
export type ModelKind = "chat" | "image" | "video" | "embedding" | "moderation"

export const chatMini = "gpt-4o-mini"
export const chat = "gpt-4o"
export const image = "image2"
export const video = "video-1"
export const embedding = "text-embedding-3-small"
export const moderation = "omni-moderation-latest"

// A fixed creation time keeps the model list byte-for-byte deterministic.
const created = 1_700_000_000

const kinds: ReadonlyArray<readonly [string, ModelKind]> = [
  [chatMini, "chat"],
  [chat, "chat"],
  [image, "image"],
  [video, "video"],
  [embedding, "embedding"],
  [moderation, "moderation"]
]

export const kindOf = (model: string): ModelKind | undefined => kinds.find(([id]) => id === model)?.[1]

export const list = () => ({
  object: "list",
  data: kinds.map(([id]) => ({ id, object: "model", created, owned_by: "switchboard-emulator" }))
})
