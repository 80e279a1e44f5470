import * as Chat from "@switchboard/core/Chat"
import * as BrowserSwitchboard from "@switchboard/browser/BrowserSwitchboard"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

// "/" is resolved against the page's address: requests go to /v1/... on this origin.
const Switchboard = BrowserSwitchboard.layer({ baseUrl: "/" })

const output = document.querySelector("#answer")!
const program = Chat.streamText({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "Write a haiku about the sea" }]
}).pipe(
  // Each delta is rendered as soon as it arrives: the body is read as a stream, not buffered.
  Stream.runForEach((delta) => Effect.sync(() => output.append(delta)))
)

await Effect.runPromise(Effect.provide(program, Switchboard))
console.log(output.textContent)
