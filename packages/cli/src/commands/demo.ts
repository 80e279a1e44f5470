/**
 * `switchboard demo`: every capability, one step after the other (see
 * `Demo.ts`, imported when the command runs: it brings the emulator and the
 * agent, which other commands do not need).
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Connection from "../Connection.js"
import * as Inputs from "../Inputs.js"
import { defaultModel as defaultVideoModel } from "./video.js"

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "demo",
  {
    out: Inputs.text("out").pipe(
      Flag.withMetavar("dir"),
      Flag.optional,
      Flag.withDescription("Directory for the demo's images and video (default: a new temporary directory)")
    ),
    videoModel: Inputs.text("video-model").pipe(
      Inputs.withDefault(defaultVideoModel, "The video model to use against the real service")
    ),
    ...Connection.flags
  },
  (flags) =>
    Effect.flatMap(Effect.promise(() => import("../Demo.js")), (Demo) =>
      Demo.run({
        baseUrl: flags.baseUrl,
        apiKey: flags.apiKey,
        verbose: flags.verbose,
        out: Option.getOrUndefined(flags.out),
        videoModel: flags.videoModel
      }))
).pipe(
  Command.withDescription(
    "Walk through every capability: the embedded emulator, or the service when SWITCHBOARD_BASE_URL and SWITCHBOARD_API_KEY are set"
  )
)
