/**
 * A typed tool: a name, a description, Effect Schemas for its parameters, its
 * success and its typed failure, and how to run it (timeout, retry, whether a
 * human must approve each call). The handler is not part of the tool: a
 * `Toolkit` provides it as a `Layer`, so it can use services.
 *
 * @since 0.1.0
 */
import { EffectVersionError } from "@switchboard/core/EffectVersion"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { toolParameters } from "./internal/jsonSchema.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@switchboard/agent/Tool")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export const HandlerTypeId: unique symbol = Symbol.for("@switchboard/agent/Tool/Handler")

/**
 * The service identifier of the handler of the tool named `Name`: what
 * `Agent.run` requires and `Toolkit.toLayer` provides.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handler<Name extends string> {
  readonly [HandlerTypeId]: Name
}

/**
 * A handler as stored in the context, with its types erased (and its
 * services already provided): the loop decodes its input and encodes its
 * output with the tool's schemas.
 *
 * @since 0.1.0
 * @category models
 */
export interface HandlerService {
  readonly handle: (params: unknown) => Effect.Effect<unknown, unknown>
}

/**
 * The schema of a tool's parameters: a `Schema.Struct` without requirements.
 *
 * @since 0.1.0
 * @category models
 */
export type ParametersSchema = Schema.Schema.AnyNoContext & { readonly fields: Schema.Struct.Fields }

/**
 * The schema of a tool's typed failure; `Schema.Never` when it cannot fail.
 *
 * @since 0.1.0
 * @category models
 */
export type FailureSchema = Schema.Schema.AnyNoContext | Schema.Schema<never, never, never>

/**
 * Any tool, whatever its schemas: what toolkits hold.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any {
  readonly [TypeId]: TypeId
  readonly name: string
  readonly description: string
  readonly parameters: ParametersSchema
  readonly success: Schema.Schema.AnyNoContext
  readonly failure: FailureSchema
  /** Limit for one call, retries included; a call that reaches it is interrupted and the model told. */
  readonly timeout: Duration.Duration | undefined
  /** Retries the handler after its typed failure (its input is the failure, hence `never` here). */
  readonly retry: Schedule.Schedule<unknown, never> | undefined
  /** Each call pauses the run until a decision is given to `Agent.resume`. */
  readonly needsApproval: boolean
  /** The entry of `tools` sent to the service (spec 2.3). */
  readonly definition: Protocol.Tool
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Tool<
  Name extends string,
  Parameters extends ParametersSchema,
  Success extends Schema.Schema.AnyNoContext,
  Failure extends FailureSchema
> extends Any {
  readonly name: Name
  readonly parameters: Parameters
  readonly success: Success
  readonly failure: Failure
  readonly retry: Schedule.Schedule<unknown, Schema.Schema.Type<Failure>> | undefined
}

/**
 * The decoded parameters a handler receives.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Parameters<T extends Any> = Schema.Schema.Type<T["parameters"]>

/**
 * @since 0.1.0
 * @category type-level
 */
export type Success<T extends Any> = Schema.Schema.Type<T["success"]>

/**
 * @since 0.1.0
 * @category type-level
 */
export type Failure<T extends Any> = Schema.Schema.Type<T["failure"]>

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<
  Parameters extends ParametersSchema,
  Success extends Schema.Schema.AnyNoContext,
  Failure extends FailureSchema
> {
  readonly description: string
  /** Annotate each field with a `description`: it is what the model reads. */
  readonly parameters: Parameters
  readonly success: Success
  /** The handler's typed failure, sent back to the model. Default `Schema.Never`. */
  readonly failure?: Failure | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly retry?: Schedule.Schedule<unknown, Schema.Schema.Type<NoInfer<Failure>>> | undefined
  readonly needsApproval?: boolean | undefined
}

const namePattern = /^[A-Za-z0-9_-]{1,64}$/

/**
 * @example
 * ```ts
 * const GetWeather = Tool.make("get_weather", {
 *   description: "Current weather in a city",
 *   parameters: Schema.Struct({ city: Schema.String.annotations({ description: "City name" }) }),
 *   success: Schema.Struct({ celsius: Schema.Number }),
 *   failure: Schema.Struct({ reason: Schema.String }),
 *   timeout: "5 seconds"
 * })
 * ```
 * @throws `IllegalArgumentException` when the name is not 1–64 of `[A-Za-z0-9_-]`:
 *   a programming error, found when the module loads.
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  const Name extends string,
  Parameters extends ParametersSchema,
  Success extends Schema.Schema.AnyNoContext,
  Failure extends FailureSchema = typeof Schema.Never
>(
  name: Name,
  options: Options<Parameters, Success, Failure>
): Tool<Name, Parameters, Success, Failure> => {
  if (!namePattern.test(name)) {
    throw new Cause.IllegalArgumentException(`tool name "${name}" must be 1-64 letters, digits, _ or -`)
  }
  // A schema from Effect 4 or another copy of effect would fail deep inside JSONSchema.
  for (const [field, schema] of [["parameters", options.parameters], ["success", options.success], ["failure", options.failure]]) {
    if (schema !== undefined && !Schema.isSchema(schema)) {
      throw new EffectVersionError(`a ${field} schema for tool "${name}" that is not an Effect 3 schema`)
    }
  }
  return {
    [TypeId]: TypeId,
    name,
    description: options.description,
    parameters: options.parameters,
    success: options.success,
    failure: options.failure ?? (Schema.Never as unknown as Failure),
    timeout: options.timeout === undefined ? undefined : Duration.decode(options.timeout),
    retry: options.retry,
    needsApproval: options.needsApproval ?? false,
    definition: {
      type: "function",
      function: { name, description: options.description, parameters: toolParameters(options.parameters) }
    }
  }
}

/** Made once per name: a tag captures a stack trace when made, and calls look one up each time. */
const handlerTags = new Map<string, Context.Tag<Handler<string>, HandlerService>>()

/**
 * Where `Toolkit.toLayer` puts the handler of the tool `name` (tags of one
 * name are equal), e.g. to provide a single handler in a test.
 *
 * @since 0.1.0
 * @category tags
 */
export const handlerTag = <Name extends string>(name: Name): Context.Tag<Handler<Name>, HandlerService> => {
  let tag = handlerTags.get(name)
  if (tag === undefined) {
    tag = Context.GenericTag<Handler<string>, HandlerService>(`@switchboard/agent/Tool/${name}`)
    handlerTags.set(name, tag)
  }
  return tag as unknown as Context.Tag<Handler<Name>, HandlerService>
}
