/**
 * Text embeddings (spec 4.4): one request, or many inputs in batches.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as GenAi from "./internal/genAi.js"
import { isNonEmptyStrings, isPlainEmbeddingResponse } from "./internal/plain.js"
import { encoder, plainDecoder } from "./internal/validate.js"
import * as Protocol from "./Protocol.js"
import * as Checks from "./internal/checks.js"
import { type RequestError, ResponseDecodeError } from "./SwitchboardError.js"
import { Transport } from "./Transport.js"

/**
 * One embedding: a list of numbers.
 *
 * @since 0.1.0
 * @category models
 */
export type Vector = ReadonlyArray<number>

/**
 * What `embedMany` takes: the model, the batch size, the requests in flight
 * and the dimensions.
 *
 * @since 0.1.0
 * @category models
 */
export interface EmbedManyOptions {
  readonly model: string
  /** Inputs per request. Default 128. */
  readonly batchSize?: number | undefined
  /** Requests in flight at once. Default 4. */
  readonly concurrency?: number | undefined
  readonly dimensions?: number | undefined
}

/**
 * The embedding calls: one request, or many inputs split into batches.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly create: (request: Protocol.EmbeddingRequest) => Effect.Effect<Protocol.EmbeddingResponse, RequestError>
  readonly embedMany: (
    inputs: ReadonlyArray<string>,
    options: EmbedManyOptions
  ) => Effect.Effect<ReadonlyArray<Vector>, RequestError>
}

/**
 * The service that makes embedding calls (see `Service`).
 *
 * @since 0.1.0
 * @category tags
 */
export class Embeddings extends Context.Service<Embeddings, Service>()("@switchboard/core/Embeddings") {}

const encodeRequest = encoder(Protocol.EmbeddingRequest)
const decodeWithSchema = plainDecoder(Protocol.EmbeddingResponse)

// `embedMany`'s cost is per input, not per request (docs/performance.md):
// the compiled `Schema.is` of a response costs about 0.6 µs an item, of the
// inputs 0.2 µs each. So both are first checked by hand, conservatively
// (property-tested against the schema); the schema has the last word.

const decodeResponse = (u: unknown): Result.Result<Protocol.EmbeddingResponse, SchemaIssue.Issue> =>
  isPlainEmbeddingResponse(u) ? Result.succeed(u) : decodeWithSchema(u)

/** An option of `embedMany`, checked as every option is: a `ConfigurationError` naming it. */
const positiveInt = (field: string, value: number) => Effect.fromResult(Checks.count(field, value, 1))

const decodeError = (message: string): Effect.Effect<never, ResponseDecodeError> =>
  Effect.fail(new ResponseDecodeError({ message: `embeddings response ${message}`, body: "" }))

/**
 * Puts one response's vectors in input order into `out`, from `offset` (its
 * batch's first input), checked against the batch's `count`: one vector per
 * input index, else the error names the first item that is not. Written in
 * place: no array per batch, no `flat()` at the end (about 0.1 µs an input,
 * docs/performance.md).
 */
const placeVectors = (
  response: Protocol.EmbeddingResponse,
  out: Array<Vector>,
  offset: number,
  count: number
): Effect.Effect<void, ResponseDecodeError> => {
  const data = response.data
  if (data.length !== count) return decodeError(`has ${data.length} vectors for ${count} inputs`)
  for (let k = 0; k < count; k++) {
    const i = data[k]!.index
    // Only indexes of the batch count: a huge `index` from a broken server must
    // not grow the array (iterating it would hang the process).
    const wrong = !(Number.isInteger(i) && i >= 0 && i < count)
      ? `is no input's (0 to ${count - 1})`
      : out[offset + i] !== undefined
      ? "repeats"
      : undefined
    if (wrong !== undefined) return decodeError(`has ${count} vectors for ${count} inputs, not one per input index: data[${k}].index ${i} ${wrong}`)
    out[offset + i] = data[k]!.embedding
  }
  return Effect.void
}

/**
 * Vectors in input order, all of one length: `dimensions` when it was asked,
 * else the first's. One comparison per vector.
 */
const checkLengths = (vectors: ReadonlyArray<Vector>, dimensions: number | undefined): Effect.Effect<void, ResponseDecodeError> => {
  const length = dimensions ?? vectors[0]?.length
  for (let i = 0; i < vectors.length; i++) {
    const got = vectors[i]!.length
    if (got !== length) {
      return decodeError(
        `has a vector of ${got} numbers for input ${i}, ` + (dimensions === undefined ? `input 0's has ${length}` : `not the ${dimensions} dimensions asked`)
      )
    }
  }
  return Effect.void
}

/**
 * Builds the embedding service over the `Transport`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.map(Effect.service(Transport), (transport): Service => {
  const send = (body: unknown, request: { readonly model: string; readonly dimensions?: number | undefined }) =>
    transport.call({
      method: "POST",
      path: "/embeddings",
      body,
      decode: decodeResponse,
      genAi: {
        operation: "embeddings",
        model: request.model,
        request: GenAi.embeddingsRequest(request),
        reply: GenAi.embeddingsReply
      }
    })

  // A reply that cannot answer the request fails: one vector per input, all of one length.
  const create = (request: Protocol.EmbeddingRequest) =>
    Effect.flatMap(Effect.fromResult(encodeRequest(request)), (body) =>
      Effect.flatMap(send(body, request), (response) => {
        const count = typeof request.input === "string" ? 1 : request.input.length
        const vectors = new Array<Vector>(count)
        return placeVectors(response, vectors, 0, count).pipe(
          Effect.andThen(() => checkLengths(vectors, request.dimensions)),
          Effect.as(response)
        )
      }))

  const embedMany = Effect.fnUntraced(
    function*(inputs: ReadonlyArray<string>, options: EmbedManyOptions) {
      const batchSize = options.batchSize ?? 128
      const { dimensions, model } = options
      yield* positiveInt("batchSize", batchSize)
      yield* positiveInt("concurrency", options.concurrency ?? 4)
      // The service rejects an empty input: nothing to embed is no vectors, not a request.
      if (inputs.length === 0) return []
      // Validated once, whole, so a bad input is named by its index: `input[7]`.
      // Inputs that are all non-empty strings need no schema: the rest of the
      // request is checked with one of them.
      const input = inputs.length > 0 && isNonEmptyStrings(inputs) ? inputs[0]! : inputs
      yield* Effect.fromResult(encodeRequest({ model, input, ...(dimensions === undefined ? {} : { dimensions }) }))
      const vectors = new Array<Vector>(inputs.length)
      const starts = Array.from({ length: Math.ceil(inputs.length / batchSize) }, (_, i) => i * batchSize)
      yield* Effect.forEach(
        starts,
        (start) => {
          const batch = inputs.slice(start, start + batchSize)
          return Effect.flatMap(
            send({ model, input: batch, ...(dimensions === undefined ? {} : { dimensions }) }, options),
            (response) => placeVectors(response, vectors, start, batch.length)
          )
        },
        { concurrency: options.concurrency ?? 4, discard: true }
      )
      // Across batches too: vectors of different lengths are no embedding of one model.
      yield* checkLengths(vectors, dimensions)
      return vectors as ReadonlyArray<Vector>
    }
  )

  return { create, embedMany }
})

/**
 * The embedding service over the `Transport`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Embeddings, never, Transport> =
  // Fresh: a constant with inputs, built anew wherever provided (docs/decisions.md).
  Layer.fresh(Layer.effect(Embeddings, make))

/**
 * Embeds one text or a list of texts in one request. A reply that cannot
 * answer it (not one vector per input index, vectors of different lengths,
 * or a length other than `dimensions` when given) fails with
 * `ResponseDecodeError`; its `data` is returned in the order sent.
 *
 * @since 0.1.0
 * @category accessors
 */
export const create = (
  request: Protocol.EmbeddingRequest
): Effect.Effect<Protocol.EmbeddingResponse, RequestError, Embeddings> =>
  Embeddings.use((embeddings) => embeddings.create(request))

/**
 * Embeds any number of texts: split into batches of `batchSize`, at most
 * `concurrency` requests at once, vectors returned in input order whatever
 * order the batches finish in, all of one length (`dimensions` when given),
 * else `ResponseDecodeError`. No inputs give no vectors, without a request.
 *
 * @since 0.1.0
 * @category accessors
 */
export const embedMany = (
  inputs: ReadonlyArray<string>,
  options: EmbedManyOptions
): Effect.Effect<ReadonlyArray<Vector>, RequestError, Embeddings> =>
  Embeddings.use((embeddings) => embeddings.embedMany(inputs, options))
