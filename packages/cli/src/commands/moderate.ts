/**
 * `switchboard moderate "<text>"`: flagged or not, and the highest category
 * scores.
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { Moderations, type Protocol } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Connection from "../Connection.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/**
 * The `top` highest category scores, highest first.
 *
 * @since 0.1.0
 * @category rendering
 */
export const topCategories = (result: Protocol.ModerationResult, top: number) =>
  Object.entries(result.category_scores).sort((a, b) => b[1] - a[1]).slice(0, Math.max(0, top))

/**
 * `flagged` / `not flagged`, then the top scores, one a line.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (result: Protocol.ModerationResult, top: number, indent = ""): string => {
  const verdict = result.flagged ? Output.red("✖ flagged") : Output.green("✔ not flagged")
  const flaggedCategories = Object.entries(result.categories ?? {}).filter(([, on]) => on).map(([name]) => name)
  const head = `${indent}${verdict}${flaggedCategories.length > 0 ? ` (${flaggedCategories.join(", ")})` : ""}`
  const scores = topCategories(result, top).map(([name, score]) => [name, score.toFixed(3)])
  return scores.length === 0 ? head : `${head}\n${Output.table(scores, indent + "  ")}`
}

/**
 * @since 0.1.0
 * @category programs
 */
export const program = (
  options: { readonly text: string; readonly model?: string | undefined; readonly top: number; readonly json: boolean }
) =>
  Effect.flatMap(
    Moderations.check(options.text, options.model === undefined ? {} : { model: options.model }),
    (result) => (options.json ? Output.line(JSON.stringify(result, null, 2)) : Output.line(render(result, options.top)))
  )

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "moderate",
  {
    text: Argument.String("text").pipe(Argument.withDescription("The text to check")),
    model: Inputs.text("model").pipe(Flag.optional, Flag.withDescription("The moderation model (default: the service's)")),
    top: Inputs.atLeast("top", 0).pipe(Inputs.withDefault(3, "How many category scores to show")),
    json: Inputs.boolean("json").pipe(Flag.withDescription("Print the whole result as JSON")),
    ...Connection.flags
  },
  (flags) => Connection.run(flags, program({ ...flags, model: Option.getOrUndefined(flags.model) }))
).pipe(Command.withDescription("Check a text against the moderation policy"))
