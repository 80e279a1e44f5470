// Bundle-size entry (src/bundle-size.ts): switchboard-all.ts's page written from the package
// indexes (`import { Chat } from "@switchboard/core"`), with every capability.
// esbuild keeps every export of a namespace that an index re-exports (docs/decisions.md).
import { Chat } from "@switchboard/core"
import { BrowserSwitchboard } from "@switchboard/browser"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] }

const program = Effect.gen(function*() {
  const completion = yield* Chat.create(request)
  document.body.append(completion.choices[0]?.message.content ?? "")
  yield* Stream.runForEach(Chat.streamText(request), (delta) => Effect.sync(() => document.body.append(delta)))
})

void Effect.runPromise(Effect.provide(program, BrowserSwitchboard.layer({ baseUrl: "/" })))
