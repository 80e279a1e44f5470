/**
 * `POST /v1/moderations`: documented keyword rules per category. A keyword
 * matches a word starting with it ("attack" matches "attacked"); the score
 * grows with the number of hits and a text is flagged when any score is at
 * least 0.5.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import { shortHash } from "./hash.js"
import * as Models from "./models.js"

/** Category → keywords. Exported for the documentation table and tests. */
export const rules: Readonly<Record<string, ReadonlyArray<string>>> = {
  "harassment": ["idiot", "stupid", "moron", "loser", "shut up"],
  "hate": ["hate", "vermin", "subhuman"],
  "illicit": ["steal", "counterfeit", "launder"],
  "self-harm": ["suicide", "self-harm", "kill myself", "hurt myself"],
  "sexual": ["sex", "nude", "porn", "explicit"],
  "violence": ["kill", "attack", "shoot", "bomb", "murder", "stab"]
}

export const neutralScore = 0.001

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const hits = (text: string, keywords: ReadonlyArray<string>): number =>
  keywords.reduce((n, keyword) => n + (text.match(new RegExp(`(?<![\\p{L}\\p{N}])${escape(keyword)}`, "giu"))?.length ?? 0), 0)

/** 0 hits → 0.001, 1 → 0.6, 2 → 0.8, 3 → 0.9, … towards 1. */
export const score = (count: number): number => count === 0 ? neutralScore : 1 - 0.4 * 0.5 ** (count - 1)

const result = (text: string) => {
  const scores = Object.fromEntries(Object.entries(rules).map(([category, keywords]) => [category, score(hits(text, keywords))]))
  const categories = Object.fromEntries(Object.entries(scores).map(([category, s]) => [category, s >= 0.5]))
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores }
}

/** The response body for a decoded request. */
export const response = (request: Protocol.ModerationRequest) => {
  const inputs = typeof request.input === "string" ? [request.input] : request.input
  return {
    id: `modr-${shortHash(inputs.join("\u0000"))}`,
    model: Models.moderation,
    results: inputs.map(result)
  }
}
