/**
 * Text helpers shared by the endpoints: message text, word counts (the
 * emulator's deterministic stand-in for tokens) and truncation.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"

type Content = string | ReadonlyArray<Protocol.ContentPart> | null | undefined

/** The text of a message's content; image parts are left out. */
export const contentText = (content: Content): string =>
  typeof content === "string"
    ? content
    : (content ?? []).flatMap((part) => part.type === "text" ? [part.text] : []).join(" ")

/** One "token" per whitespace-separated word. */
export const countWords = (text: string): number => text.split(/\s+/).filter((w) => w !== "").length

/** The text cut after its `max`-th word, or `undefined` when it is not longer. */
export const truncateWords = (text: string, max: number): string | undefined => {
  const words = [...text.matchAll(/\S+/g)]
  const last = words[max - 1]
  return words.length > max && last !== undefined ? text.slice(0, last.index + last[0].length) : undefined
}

/** Splits a string into pieces of `size` characters (code points, so no emoji is cut). */
export const chunksOf = (text: string, size: number): ReadonlyArray<string> => {
  const chars = Array.from(text)
  const out: Array<string> = []
  for (let i = 0; i < chars.length; i += Math.max(1, size)) out.push(chars.slice(i, i + Math.max(1, size)).join(""))
  return out
}
