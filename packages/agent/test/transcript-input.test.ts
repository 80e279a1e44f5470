/**
 * A stored transcript is decoded before `resume` reads it (issue 33, case 7):
 * a bad one fails with an `InvalidRequestError` naming the field, before any
 * request, never a `TypeError` defect; two unanswered calls sharing an id
 * are refused before any approval.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Protocol from "@switchboard/core/Protocol"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { Agent } from "../src/index.js"
import { emulated } from "./fixtures.js"
import { events, handlers, model, toolkit } from "./tools.js"

const setup = Effect.provide(Layer.merge(emulated(), handlers()))

const user = { role: "user", content: "Delete it" }
const call = (id: string, args: unknown = `{"path": "/tmp/a"}`) => ({ id, type: "function", function: { name: "delete_file", arguments: args } })

/** `resume` over a transcript as it came from storage: anything at all. */
const resumeStored = (transcript: unknown, decisions?: unknown) =>
  Agent.resume({
    model,
    toolkit,
    transcript: transcript as ReadonlyArray<Protocol.Message>,
    decisions: decisions as Readonly<Record<string, Agent.Decision>>
  })

const requests = Effect.flatMap(Emulator.Emulator, (e) => e.requestCount)

describe("a stored transcript that does not decode", () => {
  const cases: ReadonlyArray<readonly [string, unknown, string]> = [
    ["arguments as an object", [user, { role: "assistant", content: null, tool_calls: [call("c1", { path: "/tmp/a" })] }], "transcript[1].tool_calls[0].function.arguments"],
    ["a call with no function", [user, { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function" }] }], "transcript[1].tool_calls[0].function"],
    ["a null message", [user, null], "transcript[1]"],
    ["not an array", { messages: [] }, "transcript"],
    ["a message of no known role", [{ role: "robot", content: "hi" }], "transcript[0].role"],
    ["a circular message", (() => {
      const m: Record<string, unknown> = { role: "user" }
      m["content"] = m
      return [m]
    })(), "transcript[0].content"]
  ]
  for (const [name, transcript, field] of cases) {
    it.effect(`${name}: InvalidRequestError naming ${field}, nothing sent`, () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(resumeStored(transcript))
        expect(Exit.isFailure(exit) && exit.cause.reasons.every((r) => r._tag === "Fail")).toBe(true)
        const error = yield* Effect.flip(resumeStored(transcript))
        expect(error).toMatchObject({ _tag: "InvalidRequestError", field })
        expect(yield* requests).toBe(0)
      }).pipe(setup))
  }

  it.effect("run's messages are decoded the same way, named messages[…]", () =>
    Effect.gen(function*() {
      const messages = [user, { role: "assistant", content: null, tool_calls: [call("c1", { path: "/tmp/a" })] }]
      const error = yield* Effect.flip(Agent.run({ model, toolkit, messages: messages as ReadonlyArray<Protocol.Message> }))
      expect(error).toMatchObject({ _tag: "InvalidRequestError", field: "messages[1].tool_calls[0].function.arguments" })
    }).pipe(setup))

  it.effect("decisions that are not decisions: InvalidRequestError naming the entry", () =>
    Effect.gen(function*() {
      const transcript = [user, { role: "assistant", content: null, tool_calls: [call("c1")] }]
      const error = yield* Effect.flip(resumeStored(transcript, { x: "yes" }))
      expect(error).toMatchObject({ _tag: "InvalidRequestError", field: "decisions.x" })
      expect(yield* events).toEqual([])
    }).pipe(setup))
})

describe("a transcript that decodes", () => {
  it.effect("is kept as it is: a gateway's extra field on a message still reaches the service", () =>
    Effect.gen(function*() {
      const message = { role: "user", content: "Hi", cache_control: { type: "ephemeral" } }
      yield* Agent.run({ model, toolkit, messages: [message as Protocol.Message] })
      const [request] = yield* Effect.flatMap(Emulator.Emulator, (e) => e.requests)
      expect((request!.body as { readonly messages: ReadonlyArray<unknown> }).messages[0]).toEqual(message)
    }).pipe(setup))
})

describe("two unanswered calls sharing one id", () => {
  it.effect("are refused, naming the second, before any approval: one decision cannot run both", () =>
    Effect.gen(function*() {
      const transcript = [user, { role: "assistant", content: null, tool_calls: [call("dup"), call("dup", `{"path": "/etc/passwd"}`)] }]
      const approvalId = yield* Agent.approvalId(call("dup") as Protocol.ToolCall)
      const error = yield* Effect.flip(resumeStored(transcript, { [approvalId]: "approve" }))
      expect(error).toMatchObject({ _tag: "InvalidRequestError", field: "transcript[1].tool_calls[1].id" })
      const paused = yield* Effect.flip(resumeStored(transcript))
      expect(paused._tag).toBe("InvalidRequestError")
      expect(yield* events).toEqual([])
    }).pipe(setup))
})
