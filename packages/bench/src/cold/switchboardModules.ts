/**
 * Cold start, Switchboard imported module by module (`@switchboard/core/Chat`,
 * `@switchboard/node/NodeSwitchboard`, `effect/Effect`) instead of through
 * the package indexes; otherwise as `switchboard.ts`.
 * `node dist/cold/switchboardModules.js <port>`.
 */
import { fail, imported } from "./report.js"
import * as Chat from "@switchboard/core/Chat"
import * as NodeSwitchboard from "@switchboard/node/NodeSwitchboard"
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
