// Bundle-size entry (src/bundle-size.ts): one chat call and one streamed chat
// through @switchboard/browser with every capability (BrowserSwitchboard.layer),
// for comparison with switchboard.ts (layerChat).
import * as BrowserSwitchboard from "@switchboard/browser/BrowserSwitchboard"
import * as Chat from "@switchboard/core/Chat"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] }

const program = Effect.gen(function*() {
  const completion = yield* Chat.create(request)
  document.body.append(completion.choices[0]?.message.content ?? "")
  yield* Stream.runForEach(Chat.streamText(request), (delta) => Effect.sync(() => document.body.append(delta)))
})

void Effect.runPromise(Effect.provide(program, BrowserSwitchboard.layer({ baseUrl: "/" })))
