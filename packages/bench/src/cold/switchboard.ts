/**
 * Cold start, Switchboard: import the SDK as the README does, build
 * `NodeSwitchboard.layer`, one `Chat.create`, exit (the layer's scope closes
 * its undici agent). `node dist/cold/switchboard.js <port>`.
 */
import { fail, imported } from "./report.js"
import { Chat } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as Effect from "effect/Effect"
import { apiKey, chatRequest } from "../lib/fixtures.js"

imported()
const baseUrl = `http://127.0.0.1:${process.argv[2]}`

Chat.create(chatRequest).pipe(
  Effect.provide(NodeSwitchboard.layer({ baseUrl, apiKey })),
  Effect.runPromise
).then((completion) => {
  if (typeof completion.choices[0]?.message.content !== "string") fail("completion without content")
}, fail)
