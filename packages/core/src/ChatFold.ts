/**
 * The one fold of streamed chunks into the completion a non-streamed call
 * would have returned, one chunk at a time, within a size limit. Every path
 * that folds a stream uses it: `Chat.accumulate` and `streamWithCompletion`,
 * the GenAI telemetry of a stream, `@switchboard/ai`'s `streamText`, and so
 * the agent's streamed steps (`docs/streaming.md`, "One fold").
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type * as Protocol from "./Protocol.js"
import { ResponseDecodeError, ResponseTooLargeError, StreamError } from "./SwitchboardError.js"

/**
 * A tool call as far as its deltas have come: `id` and `name` once known,
 * the `arguments` fragments in order. A live view: it grows as chunks are added.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCallSoFar {
  readonly id: string | undefined
  readonly name: string | undefined
  /** The arguments' characters so far. */
  readonly argumentsLength: number
  /** The arguments so far, joined: a copy, for a call's start, not for every chunk. */
  readonly arguments: () => string
}

/** Pieces gathered before they are joined: bounds what a stream of tiny deltas holds per character. */
const joinEvery = 256

/**
 * Text gathered piece by piece and joined as it goes: a stream of
 * 2-character deltas (common for CJK text) holds its characters in strings
 * of hundreds, not one string object (and array slot) per delta, about
 * 17.6 bytes a character.
 *
 * @since 1.1.0
 * @category models
 */
export class Text {
  private joined: Array<string> = []
  private recent: Array<string> = []
  /**
   * Characters gathered.
   *
   * @since 1.1.0
   */
  length = 0

  /**
   * Adds a piece at the end.
   *
   * @since 1.1.0
   */
  add(piece: string): void {
    this.recent.push(piece)
    this.length += piece.length
    if (this.recent.length >= joinEvery) this.flush()
  }

  /**
   * Strings held: the joined parts and the pieces not yet joined (what `joinEvery` bounds).
   *
   * @since 1.1.0
   */
  pieces(): number {
    return this.joined.length + this.recent.length
  }

  /**
   * The text gathered so far, joined.
   *
   * @since 1.1.0
   */
  toString(): string {
    this.flush()
    if (this.joined.length > 1) this.joined = [this.joined.join("")]
    return this.joined[0] ?? ""
  }

  /**
   * Joins the pieces not yet joined into one part.
   *
   * @since 1.1.0
   */
  private flush(): void {
    if (this.recent.length === 0) return
    this.joined.push(this.recent.length === 1 ? this.recent[0]! : this.recent.join(""))
    this.recent = []
    // Joined parts are joined in turn, so a long stream holds few of them.
    if (this.joined.length >= joinEvery) this.joined = [this.joined.join("")]
  }
}

/**
 * Limits of a fold: the most characters it holds, and whether it keeps the
 * content at all.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Most characters of content, refusal, tool names and arguments held; the
   * chunk that passes it makes `add` return a `ResponseTooLargeError`.
   */
  readonly maxCharacters: number
  /**
   * `false`: only what the completion says about itself (id, model,
   * created, finish reasons, usage) is kept, no content: for telemetry
   * that does not record contents. Default `true`.
   */
  readonly content?: boolean | undefined
}

class ToolSlot implements ToolCallSoFar {
  id: string | undefined = undefined
  name: string | undefined = undefined
  readonly text = new Text()
  get argumentsLength() {
    return this.text.length
  }
  readonly arguments = () => this.text.toString()
}

interface ChoiceState {
  readonly index: number
  readonly content: Text
  readonly refusal: Text
  finishReason: string | null
  readonly calls: Array<ToolSlot>
  readonly byIndex: Map<number, ToolSlot>
  readonly byId: Map<string, ToolSlot>
  /** The slots the previous chunk's deltas went to, by position. */
  lastPositions: ReadonlyArray<ToolSlot>
}

const newChoice = (index: number): ChoiceState => ({
  index,
  content: new Text(),
  refusal: new Text(),
  finishReason: null,
  calls: [],
  byIndex: new Map(),
  byId: new Map(),
  lastPositions: []
})

/**
 * Most choices and tool calls one stream may open, together. Each is held
 * even when its deltas carry no characters, so `maxCharacters` alone would
 * not bound a stream of empty deltas that each open one.
 *
 * @since 0.1.0
 */
export const maxOpened = 4096

const newSlot = (choice: ChoiceState): ToolSlot => {
  const slot = new ToolSlot()
  choice.calls.push(slot)
  return slot
}

/**
 * Where a tool-call delta belongs: by `index`; without one, by `id`; with
 * neither, to the call the delta at the same position of the previous chunk
 * went to (servers that omit `index` keep the order), else the latest call.
 */
const slotOf = (choice: ChoiceState, delta: Protocol.ToolCallDelta, position: number): ToolSlot => {
  if (delta.index !== undefined) {
    const known = choice.byIndex.get(delta.index)
    if (known) return known
    const slot = newSlot(choice)
    choice.byIndex.set(delta.index, slot)
    return slot
  }
  if (delta.id) return choice.byId.get(delta.id) ?? newSlot(choice)
  return choice.lastPositions[position] ?? choice.calls[choice.calls.length - 1] ?? newSlot(choice)
}

/**
 * The name so far and a new fragment of it (decision: "A tool name in
 * several deltas"): a fragment that restates the whole name so far (equal
 * to it, or starting with it) replaces it; any other is appended.
 *
 * @since 0.1.0
 */
export const joinName = (sofar: string | undefined, fragment: string): string =>
  sofar === undefined || fragment.startsWith(sofar) ? fragment : sofar + fragment

/**
 * The fold of one stream, mutable: make one per stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fold {
  /**
   * Folds one chunk in. Returns the error the stream should end with when
   * the chunk took the fold past `maxCharacters` (the chunk is kept).
   */
  readonly add: (chunk: Protocol.ChatCompletionChunk) => ResponseTooLargeError | undefined
  /** Chunks added so far. */
  readonly chunks: () => number
  /** Characters held so far (see `Options.maxCharacters`). */
  readonly size: () => number
  /** The first chunk's `id`, `model`, `created`, each from the first chunk that had it. */
  readonly id: () => string | undefined
  readonly model: () => string | undefined
  /** The last `usage` sent. */
  readonly usage: () => Protocol.Usage | undefined
  /** The last `finish_reason` of each choice that had one, in choice order. */
  readonly finishReasons: () => Array<string>
  /** The tool calls of choice `index` so far, in call order. */
  readonly toolCalls: (index: number) => ReadonlyArray<ToolCallSoFar>
  /** The call each tool-call delta of choice `index` in the last chunk that had some went to, by position. */
  readonly lastToolCalls: (index: number) => ReadonlyArray<ToolCallSoFar>
  /** Strings the fold holds for content, refusals and arguments (see `Text`): bounded per character, whatever the deltas' size. */
  readonly pieces: () => number
  /**
   * The completion of the chunks so far. Fails on no chunk, and on a tool
   * call without an id or a name.
   */
  readonly completion: () => Result.Result<Protocol.ChatCompletion, StreamError | ResponseDecodeError>
}

class FoldState implements Fold {
  private count = 0
  /** Characters of content, refusal, names and arguments gathered so far. */
  private held = 0
  /** Choices and tool calls opened so far (`maxOpened`). */
  private opened = 0
  private firstId: string | undefined
  private firstModel: string | undefined
  private created: number | undefined
  private lastUsage: Protocol.Usage | undefined
  private readonly choices = new Map<number, ChoiceState>()
  private readonly keepContent: boolean
  private readonly max: number

  constructor(options: Options) {
    this.max = options.maxCharacters
    this.keepContent = options.content ?? true
  }

  readonly chunks = () => this.count
  readonly size = () => this.held
  readonly id = () => this.firstId
  readonly model = () => this.firstModel
  readonly usage = () => this.lastUsage

  readonly add = (chunk: Protocol.ChatCompletionChunk): ResponseTooLargeError | undefined => {
    this.count++
    this.firstId ??= chunk.id
    this.firstModel ??= chunk.model
    this.created ??= chunk.created
    if (chunk.usage) this.lastUsage = chunk.usage
    for (const delta of chunk.choices) {
      let choice = this.choices.get(delta.index)
      if (!choice) {
        choice = newChoice(delta.index)
        this.choices.set(delta.index, choice)
        this.opened++
      }
      if (delta.finish_reason) choice.finishReason = delta.finish_reason
      if (this.keepContent) this.held += this.addContent(choice, delta.delta)
    }
    if (this.opened > maxOpened) {
      return new ResponseTooLargeError({
        message: `the streamed completion opens more than ${maxOpened} choices and tool calls`,
        limit: maxOpened
      })
    }
    return this.held <= this.max ? undefined : new ResponseTooLargeError({
      message: `the streamed completion holds more than ${this.max} characters of content and arguments`,
      limit: this.max
    })
  }

  /** Adds a delta's content, refusal and tool calls; returns the characters it added. */
  private addContent(choice: ChoiceState, delta: Protocol.ChatCompletionChunk["choices"][number]["delta"]): number {
    let added = 0
    const { content, refusal, tool_calls } = delta
    if (content) {
      choice.content.add(content)
      added += content.length
    }
    if (refusal) {
      choice.refusal.add(refusal)
      added += refusal.length
    }
    if (tool_calls && tool_calls.length > 0) added += this.addCalls(choice, tool_calls)
    return added
  }

  private addCalls(choice: ChoiceState, deltas: ReadonlyArray<Protocol.ToolCallDelta>): number {
    const before = choice.calls.length
    let added = 0
    const positions: Array<ToolSlot> = []
    for (let position = 0; position < deltas.length; position++) {
      const delta = deltas[position]!
      const slot = slotOf(choice, delta, position)
      if (delta.id && slot.id === undefined) {
        slot.id = delta.id
        choice.byId.set(delta.id, slot)
      }
      const fn = delta.function
      if (fn?.name) {
        const before = slot.name?.length ?? 0
        slot.name = joinName(slot.name, fn.name)
        added += slot.name.length - before
      }
      if (fn?.arguments) {
        slot.text.add(fn.arguments)
        added += fn.arguments.length
      }
      positions.push(slot)
    }
    choice.lastPositions = positions
    this.opened += choice.calls.length - before
    return added
  }

  private sortedChoices(): Array<ChoiceState> {
    return [...this.choices.values()].sort((a, b) => a.index - b.index)
  }

  readonly finishReasons = (): Array<string> => {
    const reasons: Array<string> = []
    for (const choice of this.sortedChoices()) if (choice.finishReason) reasons.push(choice.finishReason)
    return reasons
  }

  readonly toolCalls = (index: number): ReadonlyArray<ToolCallSoFar> => this.choices.get(index)?.calls ?? []

  readonly lastToolCalls = (index: number): ReadonlyArray<ToolCallSoFar> => this.choices.get(index)?.lastPositions ?? []

  readonly pieces = (): number => {
    let n = 0
    for (const choice of this.choices.values()) {
      n += choice.content.pieces() + choice.refusal.pieces()
      for (const call of choice.calls) n += call.text.pieces()
    }
    return n
  }

  readonly completion = (): Result.Result<Protocol.ChatCompletion, StreamError | ResponseDecodeError> => {
    if (this.count === 0) {
      return Result.fail(new StreamError({ message: "the stream carried no chunk to accumulate", reason: "cut" }))
    }
    const choices: Array<Protocol.ChatCompletion["choices"][number]> = []
    for (const choice of this.sortedChoices()) {
      const calls: Array<Protocol.ToolCall> = []
      for (const [i, slot] of choice.calls.entries()) {
        const args = slot.text.toString()
        if (slot.id === undefined || slot.name === undefined) {
          const missing = slot.id === undefined ? "an id" : "a function name"
          // Not its arguments or name: the model's, which may echo anything, and a fold has no redaction.
          return Result.fail(
            new ResponseDecodeError({
              message: `choices[${choice.index}].tool_calls[${i}] was streamed without ${missing}`,
              body: JSON.stringify({ hasId: slot.id !== undefined, hasName: slot.name !== undefined, argumentsLength: args.length })
            })
          )
        }
        calls.push({ id: slot.id, type: "function", function: { name: slot.name, arguments: args } })
      }
      const text = choice.content.toString()
      choices.push({
        index: choice.index,
        message: {
          role: "assistant",
          content: text === "" && calls.length > 0 ? null : text,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
          ...(choice.refusal.length > 0 ? { refusal: choice.refusal.toString() } : {})
        },
        finish_reason: choice.finishReason
      })
    }
    return Result.succeed({
      // Chunks without an id (the contract shows no chunk format) give "".
      id: this.firstId ?? "",
      object: "chat.completion",
      ...(this.created === undefined ? {} : { created: this.created }),
      ...(this.firstModel === undefined ? {} : { model: this.firstModel }),
      choices,
      ...(this.lastUsage === undefined ? {} : { usage: this.lastUsage })
    })
  }
}

/**
 * A new fold, for one stream.
 *
 * @example
 * ```ts
 * import * as ChatFold from "@switchboard/core/ChatFold"
 * import type * as Protocol from "@switchboard/core/Protocol"
 * import * as Effect from "effect/Effect"
 *
 * const fold = (chunks: ReadonlyArray<Protocol.ChatCompletionChunk>) =>
 *   Effect.gen(function*() {
 *     const fold = ChatFold.make({ maxCharacters: 1_000_000 })
 *     for (const chunk of chunks) {
 *       const tooLarge = fold.add(chunk)
 *       if (tooLarge) return yield* tooLarge
 *     }
 *     return yield* Effect.fromResult(fold.completion())
 *   })
 * ```
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Fold => new FoldState(options)
