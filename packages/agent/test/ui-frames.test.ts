/**
 * `UiStream.encodeAgent` writes frames straight from the events: its bytes
 * must be those of `UiStream.encode(UiStream.fromAgent(...))`, the encoder
 * that builds part objects and stringifies them, for every part type and
 * for text that JSON must escape.
 */
import { InvalidRequestError } from "@switchboard/core/SwitchboardError"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import { type Agent, UiStream } from "../src/index.js"

/** Text that JSON escapes, or that a byte encoder could get wrong. */
const hardTexts = [
  "plain",
  "quotes \" and \\ backslashes",
  "new\nlines\r\nand\ttabs",
  "line separators \u2028 and \u2029",
  "a lone high surrogate \ud800 here",
  "a lone low surrogate \udc00 here",
  "reversed pair \udc00\ud800",
  "non-ASCII: é, 中文, emoji 😀",
  "controls \u0000\u0001\u001f and DEL \u007f",
  "</script><!-- html -->",
  ""
]

const usage = { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 }

/** A run's result with only what the mapping reads. */
const result = (fields: Partial<Agent.AgentResult>): Agent.AgentResult =>
  ({ status: "completed", message: { role: "assistant", content: "" }, usage, pending: [], ...fields }) as Agent.AgentResult

const call = (id: string, name: string, args: string) => ({ id, type: "function" as const, function: { name, arguments: args } })

/** Every event the mapping writes, over two steps, with hard texts as deltas, tool arguments and outputs. */
const events = (finished: Agent.AgentResult): ReadonlyArray<Agent.AgentEvent> => [
  ...hardTexts.map((text): Agent.AgentEvent => ({ _tag: "TextDelta", step: 0, text })),
  { _tag: "ToolCallStarted", step: 0, callId: "c\"1", name: "look\u2028up", arguments: "{\"q\":\"é \\ud800\"}" },
  { _tag: "ToolCallStarted", step: 0, callId: "c2", name: "weird", arguments: "not json \ud800 \"" },
  { _tag: "ToolCallStarted", step: 0, callId: "c3", name: "denied", arguments: "{}" },
  { _tag: "ToolCallStarted", step: 0, callId: "c4", name: "failing", arguments: "{}" },
  {
    _tag: "ToolResult",
    step: 0,
    result: { callId: "c\"1", name: "look\u2028up", arguments: "{}", outcome: "success", content: "{\"text\":\"中文\\n\\u2028\"}" }
  },
  { _tag: "ToolResult", step: 0, result: { callId: "c2", name: "weird", arguments: "", outcome: "success", content: "plain \ud800 text" } },
  { _tag: "ToolResult", step: 0, result: { callId: "c3", name: "denied", arguments: "{}", outcome: "denied", content: "denied" } },
  {
    _tag: "ToolResult",
    step: 0,
    result: { callId: "c4", name: "failing", arguments: "{}", outcome: "failure", content: "{\"error\":\"bad \\\"input\\\"\"}" }
  },
  {
    _tag: "ToolResult",
    step: 0,
    result: { callId: "c5", name: "timing", arguments: "{}", outcome: "timeout", content: "took too long \u2029" }
  },
  { _tag: "StepFinished", step: { index: 0 } as Agent.Step },
  ...hardTexts.map((text): Agent.AgentEvent => ({ _tag: "TextDelta", step: 1, text: `${text}!` })),
  { _tag: "StepFinished", step: { index: 1 } as Agent.Step },
  { _tag: "Finished", result: finished }
]

const paused = result({
  status: "paused",
  message: { role: "assistant", content: null, tool_calls: [call("p\"1", "send", "{\"to\":\"ü\\u2028\"}"), call("p2", "raw", "\ud800")] },
  pending: [{ approvalId: "a\"1\u2028", callId: "p\"1", name: "send", arguments: "{}", params: {} }]
})

const bytesOf = async (stream: Stream.Stream<Uint8Array>) =>
  Buffer.concat(await Effect.runPromise(Stream.runCollect(stream)))

/** Both encoders over the same events (in chunks of `size`, so text parts span chunks), as bytes. */
const both = async (
  source: () => Stream.Stream<Agent.AgentEvent, unknown>,
  options: UiStream.Options = {}
) => {
  const before = await bytesOf(UiStream.encode(UiStream.fromAgent(source(), options)))
  const after = await bytesOf(UiStream.encodeAgent(source(), options))
  return { before, after }
}

const chunked = (list: ReadonlyArray<Agent.AgentEvent>, size: number) => Stream.rechunk(Stream.fromIterable(list), size)

describe("UiStream.encodeAgent", () => {
  const runs: ReadonlyArray<readonly [string, Agent.AgentResult]> = [
    ["a completed run", result({ status: "completed" })],
    ["a stopped run", result({ status: "stopped" })],
    ["a paused run with approvals", paused]
  ]
  for (const [name, finished] of runs) {
    for (const size of [1, 3, 1000]) {
      it(`writes the bytes of encode(fromAgent) for ${name}, ${size} events a chunk`, async () => {
        const { after, before } = await both(() => chunked(events(finished), size))
        expect(after.equals(before)).toBe(true)
        // Every part type the mapping writes is in there.
        const text = before.toString("utf8")
        for (
          const type of [
            "start",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "tool-input-available",
            "tool-output-available",
            "tool-output-error",
            "tool-output-denied",
            "finish-step",
            "finish"
          ]
        ) expect(text).toContain(`{"type":"${type}"`)
        if (finished.status === "paused") expect(text).toContain("{\"type\":\"tool-approval-request\"")
        expect(text.endsWith("data: [DONE]\n\n")).toBe(true)
      })
    }
  }

  it("writes the same bytes for a resumed run with a message id", async () => {
    const { after, before } = await both(() => chunked(events(paused), 2), { messageId: "msg \"1\u2028", resumed: true })
    expect(after.equals(before)).toBe(true)
    expect(before.toString("utf8")).toContain("{\"type\":\"start\",\"messageId\":\"msg \\\"1\u2028\"}")
  })

  it("writes the same bytes for a run that fails mid-text, with the generic and the user's error text", async () => {
    const failing = () =>
      Stream.concat(
        chunked(events(paused).slice(0, 5), 2),
        Stream.fail(new InvalidRequestError({ field: "model", message: "sk-secret" }))
      )
    for (const options of [{}, { errorText: (error: unknown) => `"${(error as { _tag: string })._tag}" \ud800\u2028` }]) {
      const { after, before } = await both(failing, options)
      expect(after.equals(before)).toBe(true)
      expect(before.toString("utf8")).toContain("{\"type\":\"error\"")
      expect(before.toString("utf8")).not.toContain("sk-secret")
    }
  })

  it("writes the same bytes for a run without events, and for one that fails at once", async () => {
    const empty = await both(() => Stream.empty)
    expect(empty.after.equals(empty.before)).toBe(true)
    const { after, before } = await both(() => Stream.fail("boom"))
    expect(after.equals(before)).toBe(true)
    expect(before.toString("utf8")).toBe(
      "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"error\",\"errorText\":\"The request failed.\"}\n\ndata: [DONE]\n\n"
    )
  })

  it("runs onFinished with the run's result before the finish frame is handed on", async () => {
    const seen: Array<string> = []
    const stream = UiStream.encodeAgent(chunked(events(paused), 4), {
      onFinished: (finished) => Effect.sync(() => seen.push(`kept ${finished.status}`))
    }).pipe(Stream.tap((bytes) => Effect.sync(() => seen.push(Buffer.from(bytes).includes("\"finish\"") ? "finish" : "frames"))))
    await Effect.runPromise(Stream.runDrain(stream))
    expect(seen.indexOf("kept paused")).toBeGreaterThan(-1)
    expect(seen.indexOf("kept paused")).toBeLessThan(seen.indexOf("finish"))
  })
})
