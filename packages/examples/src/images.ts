import { Images } from "@switchboard/core"
import { NodeMedia, NodeSwitchboard } from "@switchboard/node"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const program = Effect.gen(function*() {
  // Text-to-image
  const images = yield* Images.generate({
    prompt: "A lighthouse at dusk",
    size: "1792x1024", // 1024x1024 | 1024x1792 | 1792x1024
    quality: "hd", //     standard | hd
    style: "natural", //  vivid | natural
    n: 2
  })
  // Image-to-image: `image` is an http(s) URL or a data URI (see docs/attachments.md)
  const edited = yield* Images.transform({ prompt: "Make it winter", image: images[0]!.url })
  // Saved to disk: written to a temporary file, linked to a free name when complete
  const paths = yield* NodeMedia.saveImages([...images, ...edited], "./out", "lighthouse")
  yield* Console.log(paths.join("\n"))
})

await program.pipe(
  Effect.provide(Layer.merge(NodeSwitchboard.layerConfig(), NodeMedia.layer)),
  Effect.runPromise
)
