/**
 * `switchboard models`: the models the service offers, as a table.
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { Models, type Protocol } from "@switchboard/core"
import * as Effect from "effect/Effect"
import * as Connection from "../Connection.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/** The day of a Unix time, or nothing when the service's `created` is no date (not a number, NaN, out of range). */
const date = (seconds: unknown): string => {
  const day = typeof seconds === "number" ? new Date(seconds * 1000) : undefined
  return day === undefined || Number.isNaN(day.getTime()) ? "" : day.toISOString().slice(0, 10)
}

/**
 * The table of models: id, owner, creation date.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (models: ReadonlyArray<Protocol.Model>, indent = ""): string =>
  Output.table([
    [Output.bold("MODEL"), Output.bold("OWNED BY"), Output.bold("CREATED")],
    ...models.map((m) => [m.id, m.owned_by ?? "", date(m.created)])
  ], indent)

/**
 * @since 0.1.0
 * @category programs
 */
export const program = (options: { readonly json: boolean }) =>
  Effect.flatMap(Models.list, (models) =>
    options.json
      ? Output.line(JSON.stringify(models, null, 2))
      : models.length === 0
      ? Output.line("The service lists no models.")
      : Output.line(render(models)))

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "models",
  { ...Connection.flags, json: Inputs.boolean("json").pipe(Flag.withDescription("Print the list as JSON")) },
  (flags) => Connection.run(flags, program(flags))
).pipe(Command.withDescription("List the models the service offers"))
