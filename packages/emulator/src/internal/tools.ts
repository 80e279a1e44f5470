/**
 * The documented tool rule (docs/emulator.md, "Tools"): the last user
 * message is a script. Segments split on the word `then` are steps; the tools
 * a segment names are called together; `invalid` makes the step's first call
 * fail its schema once. Everything is derived from the request, so the same
 * conversation always gets the same calls.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import * as Conversation from "./conversation.js"
import { shortHash } from "./hash.js"
import { contentText } from "./text.js"
import * as ToolArguments from "./toolArguments.js"

type Message = Protocol.ChatRequest["messages"][number]

interface PlannedCall {
  readonly tool: Protocol.Tool
  /** JSON text given in the prompt as `name({...})`, used verbatim. */
  readonly explicit: string | undefined
}

interface Step {
  readonly calls: ReadonlyArray<PlannedCall>
  readonly invalid: boolean
}

/**
 * @internal
 */
export interface OutgoingCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

const nameChar = /[A-Za-z0-9_-]/

/** The balanced `{...}` starting at `start`, skipping braces inside strings. */
const jsonObjectAt = (text: string, start: number): string | undefined => {
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === "\"") inString = false
    } else if (c === "\"") inString = true
    else if (c === "{") depth++
    else if (c === "}" && --depth === 0) return text.slice(start, i + 1)
  }
  return undefined
}

/** `name({...})` right after a mention: the JSON text, when it is followed by `)`. */
const explicitArguments = (text: string, end: number): string | undefined => {
  const open = /^\(\s*\{/.exec(text.slice(end))
  if (!open) return undefined
  const json = jsonObjectAt(text, end + open[0].length - 1)
  return json !== undefined && /^\s*\)/.test(text.slice(end + open[0].length - 1 + json.length)) ? json : undefined
}

interface Mention {
  readonly tool: Protocol.Tool
  readonly explicit: string | undefined
}

const mentionsIn = (segment: string, tools: ReadonlyArray<Protocol.Tool>): ReadonlyArray<Mention> => {
  const found: Array<Mention & { readonly at: number }> = []
  for (const tool of tools) {
    const name = tool.function.name
    for (let at = segment.indexOf(name); at !== -1; at = segment.indexOf(name, at + 1)) {
      const end = at + name.length
      const isWord = !nameChar.test(segment[at - 1] ?? "") && !nameChar.test(segment[end] ?? "")
      // "B with A's result" refers to A; it does not call it again.
      if (isWord && !/^['’]s\b/.test(segment.slice(end))) found.push({ tool, explicit: explicitArguments(segment, end), at })
    }
  }
  return found.sort((a, b) => a.at - b.at)
}

/** Every `name({...})` mention is a call; bare mentions add one call per tool not called otherwise. */
const callsIn = (segment: string, tools: ReadonlyArray<Protocol.Tool>): ReadonlyArray<PlannedCall> => {
  const mentions = mentionsIn(segment, tools)
  const explicitNames = new Set(mentions.filter((m) => m.explicit !== undefined).map((m) => m.tool.function.name))
  const bareSeen = new Set<string>()
  return mentions.filter((m) => {
    const name = m.tool.function.name
    if (m.explicit !== undefined) return true
    if (explicitNames.has(name) || bareSeen.has(name)) return false
    bareSeen.add(name)
    return true
  })
}

const mentionsInvalid = (segment: string): boolean => /\binvalid\b/i.test(segment)

/** The steps for this turn; empty when no tool is to be called. */
export const plan = (
  text: string,
  tools: ReadonlyArray<Protocol.Tool> | undefined,
  choice: Protocol.ToolChoice | undefined
): ReadonlyArray<Step> => {
  if (!tools || tools.length === 0 || choice === "none") return []
  const segments = text.split(/\bthen\b/i)
  const firstInvalid = mentionsInvalid(segments[0] ?? "")
  if (typeof choice === "object") {
    const tool = tools.find((t) => t.function.name === choice.function.name)
    const explicit = callsIn(text, tools).find((c) => c.tool === tool)?.explicit
    return tool ? [{ calls: [{ tool, explicit }], invalid: firstInvalid }] : []
  }
  const steps = segments
    .map((segment) => ({ calls: callsIn(segment, tools), invalid: mentionsInvalid(segment) }))
    .filter((step) => step.calls.length > 0)
  const first = tools[0]
  return steps.length === 0 && choice === "required" && first
    ? [{ calls: [{ tool: first, explicit: undefined }], invalid: firstInvalid }]
    : steps
}

/** Content of the last tool message before `before`: what string arguments are filled with. */
const previousResult = (messages: ReadonlyArray<Message>, before: number): string | undefined =>
  Conversation.toolResults(messages.slice(0, before)).at(-1)?.content

const isError = (content: string | undefined): boolean => content !== undefined && /error/i.test(content)

interface Position {
  readonly step: number
  /** 1 when the step's invalid first call came back with an error and is re-sent. */
  readonly attempt: 0 | 1
  /** Message index the arguments are built at (results before it count). */
  readonly at: number
}

/** Where the conversation stands: replays the tool turns since the last user message. */
const position = (messages: ReadonlyArray<Message>, from: number, steps: ReadonlyArray<Step>): Position => {
  const results = new Map(Conversation.toolResults(messages, from).map((r) => [r.callId, r.content]))
  let current: Position = { step: 0, attempt: 0, at: messages.length }
  for (const [i, message] of messages.entries()) {
    if (i < from || message.role !== "assistant" || !message.tool_calls?.length) continue
    const first = message.tool_calls[0]
    const planned = steps[current.step]
    const failedInvalid = current.attempt === 0 && planned?.invalid === true &&
      first?.function.name === planned.calls[0]?.tool.function.name && isError(results.get(first?.id ?? ""))
    current = failedInvalid
      ? { step: current.step, attempt: 1, at: i }
      : { step: current.step + 1, attempt: 0, at: messages.length }
  }
  return current
}

const callId = (seed: string, step: number, index: number) => `call_${step}_${index}_${shortHash(`${seed}|${step}|${index}`)}`

/**
 * Where the replayed turns start: after the last user message; for a forced
 * function, after the last tool turn that called something else, so that a
 * forced call after other tools ran in this turn (structured output at the
 * end of an agent run) is still made.
 */
const turnStart = (request: Protocol.ChatRequest, lastUser: number): number => {
  const choice = request.tool_choice
  if (typeof choice !== "object") return lastUser + 1
  const callsOther = (message: Message) =>
    message.role === "assistant" && (message.tool_calls ?? []).some((call) => call.function.name !== choice.function.name)
  let start = lastUser + 1
  request.messages.forEach((message, i) => {
    if (i > lastUser && callsOther(message)) start = i + 1
  })
  return start
}

/**
 * The tool calls to send now, or `undefined` when every step is done and the
 * model should answer in text.
 */
export const nextCalls = (request: Protocol.ChatRequest): ReadonlyArray<OutgoingCall> | undefined => {
  const messages = request.messages
  const lastUser = Conversation.lastUserIndex(messages)
  const text = contentText(messages[lastUser]?.content)
  const steps = plan(text, request.tools, request.tool_choice)
  const { at, attempt, step } = position(messages, turnStart(request, lastUser), steps)
  const current = steps[step]
  if (current === undefined) return undefined
  const previous = previousResult(messages, at)
  // The user turn's index and text make ids unique across turns of one conversation.
  const seed = `${lastUser}|${text}|${attempt}`
  const planned = attempt === 1 ? current.calls.slice(0, 1) : current.calls
  return planned.map(({ explicit, tool }, i) => ({
    id: callId(seed, step, i),
    name: tool.function.name,
    arguments: attempt === 0 && i === 0 && current.invalid
      ? ToolArguments.invalid(tool.function.parameters, previous)
      : explicit ?? ToolArguments.build(tool.function.parameters, previous)
  }))
}

const quote = (content: string): string => {
  try {
    JSON.parse(content)
    return content.trim()
  } catch {
    return JSON.stringify(content)
  }
}

/** `get_weather → {"temp":21}; get_time → "12:00"` for the results of this turn, or `undefined`. */
export const summarizeResults = (messages: ReadonlyArray<Message>): string | undefined => {
  const results = Conversation.toolResults(messages, Conversation.lastUserIndex(messages) + 1)
  return results.length === 0
    ? undefined
    : `Tool results: ${results.map((r) => `${r.name} → ${quote(r.content)}`).join("; ")}.`
}
