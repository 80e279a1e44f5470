import { Attachment, Chat } from "@switchboard/core"
import { NodeAttachment, NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const program = Effect.gen(function*() {
  const photo = yield* NodeAttachment.fromFile("photo.png", { detail: "high" })
  const link = yield* Attachment.fromUrl("https://example.com/cat.jpg")
  yield* Chat.streamText({
    model: "gpt-4o-mini",
    messages: [Attachment.message("What is in these two pictures?", photo, link)]
  }).pipe(Stream.runForEach((text) => Effect.sync(() => process.stdout.write(text))))
  // A missing file is an AttachmentError, before any request: here, skipped.
  const missing = yield* NodeAttachment.fromFile("no-such-photo.png").pipe(
    Effect.catchTag("AttachmentError", (error) => (error.reason === "NotFound" ? Effect.succeed(undefined) : Effect.fail(error)))
  )
  yield* Console.log(`\nno-such-photo.png: ${missing === undefined ? "skipped" : "attached"}`)
})

await program.pipe(Effect.provide(NodeSwitchboard.layerConfig()), Effect.runPromise)
