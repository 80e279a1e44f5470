/**
 * Wire shapes of the endpoints other than chat: embeddings, moderations,
 * models, task status and the error body. Re-exported by `Protocol`, which
 * documents them; kept apart so that a chat-only bundle does not carry them.
 */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { absentOrNull, NonEmptyString, open, PositiveInt, positioned, tokenCount } from "./protocolParts.js"

const optional = Schema.optional
const orNull = absentOrNull

// ---------------------------------------------------------------------------
// Embeddings, moderations, models (spec 4.2, 4.4, 4.5)
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category embeddings
 */
export const EmbeddingRequest = Schema.Struct({
  model: NonEmptyString,
  input: Schema.Union([
    NonEmptyString,
    Schema.Array(NonEmptyString).check(Schema.isMinLength(1, { message: "must not be empty" }))
  ]),
  dimensions: optional(PositiveInt),
  encoding_format: optional(Schema.Literal("float")),
  user: optional(Schema.String)
})
/**
 * @since 0.1.0
 * @category embeddings
 */
export type EmbeddingRequest = typeof EmbeddingRequest.Type

const isVector = (u: unknown): u is ReadonlyArray<number> => {
  if (!Array.isArray(u)) return false
  for (let i = 0; i < u.length; i++) if (typeof u[i] !== "number") return false
  return true
}

/**
 * An embedding: an array of numbers. Checked by one loop rather than as
 * `Schema.Array(Schema.Number)`, whose per-element parse costs about 0.2 µs a
 * number: 300 µs for one 1,536-dimension vector, many times its `JSON.parse`.
 *
 * @since 0.1.0
 * @category embeddings
 */
export const Vector: Schema.declare<ReadonlyArray<number>> = Schema.declare(isVector, {
  identifier: "Vector",
  expected: "an array of numbers",
  toCodecArbitrary: () =>
    Schema.link<ReadonlyArray<number>>()(Schema.Array(Schema.Finite), SchemaTransformation.passthrough())
})

/**
 * One vector of an embeddings reply.
 *
 * @since 0.1.0
 * @category embeddings
 */
export const Embedding = open({ object: orNull(Schema.String), index: Schema.Number, embedding: Vector })

/**
 * Required: `data` and each element's `embedding`; `index` defaults to the
 * element's position.
 *
 * @since 0.1.0
 * @category embeddings
 */
export const EmbeddingResponse = open({
  object: orNull(Schema.String),
  model: orNull(Schema.String),
  data: positioned(
    open({ object: orNull(Schema.String), index: orNull(Schema.Number), embedding: Vector }),
    Embedding
  ),
  usage: orNull(open({ prompt_tokens: tokenCount, total_tokens: tokenCount }))
})
/**
 * @since 0.1.0
 * @category embeddings
 */
export type EmbeddingResponse = typeof EmbeddingResponse.Type

/**
 * @since 0.1.0
 * @category moderations
 */
export const ModerationRequest = Schema.Struct({
  input: Schema.Union([
    NonEmptyString,
    Schema.Array(NonEmptyString).check(Schema.isMinLength(1, { message: "must not be empty" }))
  ]),
  model: optional(NonEmptyString)
})
/**
 * @since 0.1.0
 * @category moderations
 */
export type ModerationRequest = typeof ModerationRequest.Type

/**
 * @since 0.1.0
 * @category moderations
 */
export const ModerationResult = open({
  flagged: Schema.Boolean,
  categories: orNull(Schema.Record(Schema.String, Schema.Boolean)),
  category_scores: Schema.Record(Schema.String, Schema.Number)
})
/**
 * @since 0.1.0
 * @category moderations
 */
export type ModerationResult = typeof ModerationResult.Type

/**
 * @since 0.1.0
 * @category moderations
 */
export const ModerationResponse = open({
  id: orNull(Schema.String),
  model: orNull(Schema.String),
  results: Schema.Array(ModerationResult)
})
/**
 * @since 0.1.0
 * @category moderations
 */
export type ModerationResponse = typeof ModerationResponse.Type

/**
 * @since 0.1.0
 * @category models
 */
export const Model = open({
  id: Schema.String,
  object: orNull(Schema.String),
  created: orNull(Schema.Number),
  owned_by: orNull(Schema.String)
})
/**
 * @since 0.1.0
 * @category models
 */
export type Model = typeof Model.Type

/**
 * The model list: `{"object": "list", "data": [...]}`, or a bare array
 * (decision 5). Both decode to the object form.
 *
 * @since 0.1.0
 * @category models
 */
export const ModelList = Schema.Union([
  open({ object: orNull(Schema.String), data: Schema.Array(Model) }),
  Schema.Array(Model).pipe(Schema.decodeTo(
    Schema.Struct({ data: Schema.Array(Schema.toType(Model)) }),
    SchemaTransformation.transform({ decode: (data) => ({ data }), encode: ({ data }) => data })
  ))
])
/**
 * @since 0.1.0
 * @category models
 */
export type ModelList = typeof ModelList.Type

// ---------------------------------------------------------------------------
// Video tasks (spec 4.3, decision 3)
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category tasks
 */
export const TaskStatusRequest = Schema.Struct({ task_id: NonEmptyString })

/**
 * `45`, `"45%"` or `" 45 "` → 45; anything else (a number too large for a
 * double too) is no progress. Trimmed before the pattern: spaces on both
 * sides of an optional `%` in one pattern made its reading quadratic.
 */
const progressOf = (u: unknown): number | undefined => {
  const n = typeof u === "number" ? u : typeof u === "string" ? progressText(u.trim()) : undefined
  return n !== undefined && Number.isFinite(n) ? n : undefined
}

const progressText = (text: string): number | undefined => {
  const digits = text.endsWith("%") ? text.slice(0, -1).trimEnd() : text
  return /^\d+(?:\.\d+)?$/.test(digits) ? Number(digits) : undefined
}

/**
 * `progress`, which the contract does not show: a number, or text such as
 * `"45%"`, is read as a number; any other value as no progress.
 *
 * @since 0.1.0
 * @category tasks
 */
export const Progress = Schema.Unknown.pipe(Schema.decodeTo(
  Schema.UndefinedOr(Schema.Number),
  SchemaTransformation.transform<number | undefined, unknown>({ decode: progressOf, encode: (n) => n })
))

/**
 * `status` is `succeed` or `failed` when terminal; any other value is in
 * progress and is kept as it came. The contract shows only `status` and, on
 * success, `video_url`: a `null` `video_url` is absent, and `progress` is
 * read when it can be (`docs/decisions.md`).
 *
 * @since 0.1.0
 * @category tasks
 */
export const TaskStatusResponse = open({
  status: Schema.String,
  video_url: orNull(Schema.String),
  progress: optional(Progress),
  // Where a failed task's reason may be, in whatever shape: read, never required.
  reason: optional(Schema.Unknown),
  fail_reason: optional(Schema.Unknown),
  error: optional(Schema.Unknown),
  message: optional(Schema.Unknown)
})
/**
 * @since 0.1.0
 * @category tasks
 */
export type TaskStatusResponse = typeof TaskStatusResponse.Type

// ---------------------------------------------------------------------------
// Errors (decision 2)
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category errors
 */
export const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    message: Schema.String,
    type: optional(Schema.NullOr(Schema.String)),
    param: optional(Schema.NullOr(Schema.String)),
    code: optional(Schema.NullOr(Schema.Union([Schema.String, Schema.Number])))
  })
})
/**
 * @since 0.1.0
 * @category errors
 */
export type ErrorBody = typeof ErrorBody.Type
