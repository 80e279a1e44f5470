/**
 * `switchboard demo`: every capability, one step after the other (see
 * `Demo.ts`).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Option from "effect/Option"
import * as Connection from "../Connection.js"
import * as Demo from "../Demo.js"

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "demo",
  {
    out: Options.text("out").pipe(
      Options.withPseudoName("dir"),
      Options.optional,
      Options.withDescription("Directory for the demo's images and video (default: a new temporary directory)")
    ),
    videoModel: Options.text("video-model").pipe(
      Options.withDefault(Demo.models.video),
      Options.withDescription("The video model to use against the real service")
    ),
    ...Connection.flags
  },
  (flags) =>
    Demo.run({
      baseUrl: flags.baseUrl,
      apiKey: flags.apiKey,
      verbose: flags.verbose,
      out: Option.getOrUndefined(flags.out),
      videoModel: flags.videoModel
    })
).pipe(
  Command.withDescription(
    "Walk through every capability: the embedded emulator, or the service when SWITCHBOARD_BASE_URL and SWITCHBOARD_API_KEY are set"
  )
)
