/**
 * The emulator in process on a free port and the Node layer pointed at it
 * (as in packages/node/test/fixtures.ts), so every agent test crosses real
 * HTTP; plus helpers to drive the `TestClock` while real I/O happens.
 */
import * as Chat from "@switchboard/core/Chat"
import type * as Protocol from "@switchboard/core/Protocol"
import { Emulator } from "@switchboard/emulator"
import { NodeSwitchboard } from "@switchboard/node"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"


/** The emulator, and the SDK configured for it, on a `RecordingClock.layer`. */
export const emulated = () =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) => NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
  ).pipe(Layer.provideMerge(Emulator.layer()), Layer.provideMerge(RecordingClock.layer))

/** Waits, without touching the clock, until `effect` gives a value that passes `done`. */
export const waitUntil = <A>(effect: Effect.Effect<A>, done: (a: A) => boolean): Effect.Effect<A> =>
  Effect.flatMap(effect, (a) => (done(a) ? Effect.succeed(a) : Effect.andThen(Effect.yieldNow, waitUntil(effect, done))))

/**
 * Waits until `n` fibers sleep until exactly `millis` from now: the tools'
 * `Effect.sleep`s, told apart from the transport's 60 s request timeout.
 */
export const awaitSleepers = (n: number, millis: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    waitUntil(
      Effect.map(RecordingClock.sleeps, (all) => all.filter((at) => at === now + millis).length),
      (count) => count >= n
    ))

/** The `tool_choice` of every chat request the emulator received. */
export const sentToolChoices = Effect.map(Effect.flatMap(Emulator.Emulator, (e) => e.requests), (requests) =>
  requests
    .filter((r) => r.path.endsWith("/chat/completions"))
    .map((r) => (r.body as { readonly tool_choice?: Protocol.ToolChoice }).tool_choice))

/** Runs `effect` against a `Chat` whose completions pass through `rewrite` (a model that misbehaves). */
export const withModel = (
  rewrite: (request: Protocol.ChatRequest, completion: Protocol.ChatCompletion) => Protocol.ChatCompletion
) =>
<A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideServiceEffect(
    effect,
    Chat.Chat,
    Effect.map(Chat.Chat, (chat) => ({
      ...chat,
      create: (request: Protocol.ChatRequest) => Effect.map(chat.create(request), (c) => rewrite(request, c))
    }))
  )

/** The completion with its first choice's tool calls replaced by `f` of them. */
export const mapCalls = (
  completion: Protocol.ChatCompletion,
  f: (calls: ReadonlyArray<Protocol.ToolCall>) => ReadonlyArray<Protocol.ToolCall>
): Protocol.ChatCompletion => ({
  ...completion,
  choices: completion.choices.map((choice, i) =>
    i === 0 && choice.message.tool_calls ? { ...choice, message: { ...choice.message, tool_calls: f(choice.message.tool_calls) } } : choice
  )
})

/** One recorder for every package's tests. */
export { recordingSpans } from "@switchboard/emulator/RecordingTracer"

