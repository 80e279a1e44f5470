/**
 * A set of tools, and the `Layer` that provides their handlers. Handlers are
 * typed from the tools' schemas (parameters in, success out, typed failure)
 * and may use any service: the layer requires what they require.
 *
 * @since 0.1.0
 */
import * as EffectVersion from "@switchboard/core/EffectVersion"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tool from "./Tool.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@switchboard/agent/Toolkit")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * Tools by name.
 *
 * @since 0.1.0
 * @category models
 */
export type Tools = { readonly [name: string]: Tool.Any }

/**
 * One handler per tool: decoded parameters in, an effect of the tool's
 * success or typed failure out, with any requirements.
 *
 * @since 0.1.0
 * @category models
 */
export type HandlersFrom<T extends Tools> = {
  readonly [K in keyof T]: (
    params: Tool.Parameters<T[K]>
  ) => Effect.Effect<Tool.Success<T[K]>, Tool.Failure<T[K]>, unknown>
}

/**
 * The services the handlers of `T` are found under: what `Agent.run` requires.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Handlers<T extends Tools> = { [K in keyof T]: Tool.Handler<T[K]["name"]> }[keyof T]

/**
 * What the handlers of `H` require.
 *
 * @since 0.1.0
 * @category type-level
 */
export type HandlersContext<H> = {
  [K in keyof H]: H[K] extends (...args: never) => Effect.Effect<infer _A, infer _E, infer R> ? R : never
}[keyof H]

/**
 * @since 0.1.0
 * @category models
 */
export interface Toolkit<T extends Tools> {
  readonly [TypeId]: TypeId
  readonly tools: T
  /** The `tools` of a chat request, in the order the tools were given. */
  readonly definitions: ReadonlyArray<Protocol.Tool>
  /**
   * @example
   * ```ts
   * const HandlersLive = toolkit.toLayer({
   *   get_weather: ({ city }) => Effect.map(WeatherApi, (api) => api.current(city))
   * })
   * ```
   */
  readonly toLayer: <H extends HandlersFrom<T>>(handlers: H) => Layer.Layer<Handlers<T>, never, HandlersContext<H>>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Any extends Toolkit<Tools> {}

/**
 * The name → tool record of a list of tools.
 *
 * @since 0.1.0
 * @category type-level
 */
export type ByName<List extends ReadonlyArray<Tool.Any>> = { readonly [T in List[number] as T["name"]]: T }

/**
 * @throws `IllegalArgumentException` when two tools share a name.
 * @since 0.1.0
 * @category constructors
 */
export const make = <const List extends ReadonlyArray<Tool.Any>>(...list: List): Toolkit<ByName<List>> => {
  const tools: Record<string, Tool.Any> = {}
  for (const tool of list) {
    if (tools[tool.name] !== undefined) throw new Cause.IllegalArgumentException(`two tools are named "${tool.name}"`)
    tools[tool.name] = tool
  }
  return {
    [TypeId]: TypeId,
    tools: tools as ByName<List>,
    definitions: list.map((tool) => tool.definition),
    toLayer: (handlers) => {
      const byName = handlers as unknown as Record<string, (params: unknown) => Effect.Effect<unknown, unknown>>
      return EffectVersion.guard(Layer.effectContext(
        Effect.map(Effect.context<never>(), (context) =>
          list.reduce(
            (acc, tool) =>
              Context.add(acc, Tool.handlerTag(tool.name), {
                // The handler's services are captured when the layer is built.
                handle: (params) => Effect.provide(byName[tool.name]!(params), context)
              }),
            Context.empty() as Context.Context<Tool.Handler<string>>
          ))
      )) as never
    }
  }
}
