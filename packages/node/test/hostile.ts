/**
 * Hostile servers (`@switchboard/test-support/Hostile`) with the SDK pointed at them.
 */
import type * as SwitchboardConfig from "@switchboard/core/SwitchboardConfig"
import { type Handler, type Hostile, json, serve } from "@switchboard/test-support/Hostile"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { NodeSwitchboard } from "../src/index.js"

export { type Handler, type Hostile, json, serve, sse } from "@switchboard/test-support/Hostile"

export const apiKey = "sk-hostile-0123456789abcdef"

/** The SDK pointed at a hostile server: no retry waits, options overriding. */
export const sdk = (hostile: Hostile, options: Partial<SwitchboardConfig.Options> = {}) =>
  NodeSwitchboard.layer({ baseUrl: hostile.url, apiKey, retryBaseDelay: 0, maxRetryDelay: 0, ...options })

/** Runs `use` with a hostile server and the SDK over it. */
export const against = <A, E, R>(
  handler: Handler,
  use: (hostile: Hostile) => Effect.Effect<A, E, R>,
  options: Partial<SwitchboardConfig.Options> = {}
) =>
  Effect.scoped(
    Effect.flatMap(serve(handler), (hostile) =>
      Effect.provide(use(hostile), Layer.orDie(sdk(hostile, options))) as Effect.Effect<
        A,
        E,
        Exclude<R, NodeSwitchboard.Services>
      >)
  )

/** A reply whose only tool call, `respond`, carries `args` (what `Chat.createObject` decodes). */
export const respondWith = (args: string): Handler => (_request, response) =>
  json(response, 200, {
    id: "x",
    choices: [{
      index: 0,
      finish_reason: "tool_calls",
      message: { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "respond", arguments: args } }] }
    }]
  })
