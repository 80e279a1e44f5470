/**
 * `--help` that follows the terminal, and usage errors as one line.
 *
 * effect/cli's help document (`HelpDoc`) holds the description, usage,
 * arguments, flags and subcommands of a command as data; effect/cli's own
 * formatter lays it out unwrapped, with its type names (`string`) and with
 * repeatable flags marked as required. Here the document is laid out again:
 * wrapped to the terminal's width, bold headings only where `Output.colours`
 * allows.
 *
 * @since 0.1.0
 */
import type * as CliError from "effect/cli/CliError"
import type * as HelpDoc from "effect/cli/HelpDoc"
import * as Option from "effect/Option"
import * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"

// ---------------------------------------------------------------------------
// Reading a HelpDoc
// ---------------------------------------------------------------------------

/**
 * One argument or flag of a command, as the help lists it.
 *
 * @since 0.1.0
 */
export interface Entry {
  /** `--model text`, `<prompt>`. */
  readonly term: string
  readonly description: string
  readonly optional: boolean
  readonly repeated: boolean
}

/**
 * A command's subcommands: name and description.
 *
 * @since 0.1.0
 */
export interface Subcommand {
  readonly name: string
  readonly description: string
}

/**
 * Everything one help screen shows.
 *
 * @since 0.1.0
 */
export interface Screen {
  /** `switchboard chat`. */
  readonly path: string
  readonly description: string
  readonly args: ReadonlyArray<Entry>
  readonly options: ReadonlyArray<Entry>
  readonly subcommands: ReadonlyArray<Subcommand>
  readonly version?: string | undefined
}

const dash = (name: string) => (name.length === 1 ? `-${name}` : `--${name}`)

/** A flag as its entry: `Inputs.repeated` marks repeatable flags in their description. */
const flagEntry = (flag: HelpDoc.FlagDoc): Entry => {
  const description = Option.getOrElse(flag.description, () => "")
  const repeated = description.endsWith(Inputs.repeatedMark)
  return {
    term: [...flag.aliases, dash(flag.name)].join(", ") + (flag.type === "boolean" ? "" : ` ${flag.type}`),
    description,
    optional: repeated || !flag.required,
    repeated
  }
}

const argEntry = (arg: HelpDoc.ArgDoc): Entry => ({
  term: `<${arg.name}>`,
  description: Option.getOrElse(arg.description, () => ""),
  optional: !arg.required,
  repeated: arg.variadic
})

const helpFlag: Entry = { term: "-h, --help", description: "Show this help", optional: true, repeated: false }
const versionFlag: Entry = { term: "--version", description: "Show the version", optional: true, repeated: false }

/**
 * The help screen of a help document; `version` for the program's own.
 *
 * @since 0.1.0
 * @category help
 */
export const screen = (doc: HelpDoc.HelpDoc, version?: string): Screen => ({
  path: (doc.commandPath ?? []).join(" "),
  description: doc.description,
  args: (doc.args ?? []).map(argEntry),
  options: [...doc.flags.map(flagEntry), helpFlag, ...(version === undefined ? [] : [versionFlag])],
  subcommands: (doc.subcommands ?? []).flatMap((group) => group.commands.map((c) => ({ name: c.name, description: c.shortDescription ?? c.description }))),
  version
})

// ---------------------------------------------------------------------------
// Laying it out
// ---------------------------------------------------------------------------

/**
 * The width to wrap to: the terminal's, `COLUMNS` when not a terminal, else 80.
 *
 * @since 0.1.0
 * @category layout
 */
export const width = (target: Output.Target = process.stdout): number => {
  const columns = target.isTTY ? target.columns : Number(process.env["COLUMNS"])
  return Number.isFinite(columns) && columns! >= 20 ? columns! : 80
}

/**
 * `words` filled into lines of at most `width` characters, the first line
 * starting at `first` columns in, the others indented by `rest`. A word
 * longer than a line stays whole.
 */
const fill = (words: ReadonlyArray<string>, width: number, first: number, rest: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  let start = first
  for (const word of words) {
    if (line !== "" && start + line.length + 1 + word.length > width) {
      lines.push(line)
      line = ""
      start = rest
    }
    line = line === "" ? word : `${line} ${word}`
  }
  if (line !== "") lines.push(line)
  return lines.map((l, i) => (i === 0 ? l : " ".repeat(rest) + l))
}

const wordsOf = (text: string) => text.split(/\s+/).filter((w) => w !== "")

/** A paragraph wrapped at `indent` columns in. */
const paragraph = (text: string, width: number, indent = 0): string =>
  fill(wordsOf(text), width, indent, indent).map((l, i) => (i === 0 ? " ".repeat(indent) + l : l)).join("\n")

/**
 * A term in a column of `column` characters (after a 2-space indent), its
 * description wrapped beside it, or under it when the term is too long.
 */
const definition = (term: string, description: string, column: number, width: number): string => {
  const at = 2 + column
  if (term.length < column) {
    const text = fill(wordsOf(description), width, at, at)
    return `  ${term.padEnd(column)}${text.join("\n")}`.trimEnd()
  }
  return description === "" ? `  ${term}` : `  ${term}\n${paragraph(description, width, at)}`
}

const usageWord = (e: Entry): string =>
  e.repeated ? (e.optional ? `[${e.term}]...` : `${e.term}...`) : e.optional ? `[${e.term}]` : e.term

/**
 * The help screen as text for `target`: wrapped to its width, bold headings
 * only where it takes colour.
 *
 * @since 0.1.0
 * @category layout
 */
export const render = (screen: Screen, target: Output.Target = process.stdout): string => {
  const cols = width(target)
  const heading = (title: string) => Output.bold(title, target)
  const shown = screen.options.filter((e) => e !== helpFlag && e !== versionFlag)
  const words = [...(screen.subcommands.length > 0 ? ["<command>"] : []), ...shown.map(usageWord), ...screen.args.map(usageWord)]
  const column = Math.min(24, Math.max(...[...screen.args, ...screen.options].map((e) => e.term.length)) + 2)
  const blocks = [
    paragraph(screen.version === undefined ? screen.description : `${screen.description} (version ${screen.version})`, cols),
    // Each usage word whole on a line, continuation lines indented by 4.
    [heading("USAGE"), `  ${fill([screen.path, ...words], cols, 2, 6).join("\n")}`].join("\n")
  ]
  if (screen.subcommands.length > 0) {
    const nameColumn = Math.max(...screen.subcommands.map((c) => c.name.length)) + 2
    blocks.push([heading("COMMANDS"), ...screen.subcommands.map((c) => definition(c.name, c.description, nameColumn, cols))].join("\n"))
  }
  if (screen.args.length > 0) {
    blocks.push([heading("ARGUMENTS"), ...screen.args.map((e) => definition(e.term, e.description, column, cols))].join("\n"))
  }
  blocks.push([heading("OPTIONS"), ...screen.options.map((e) => definition(e.term, e.description, column, cols))].join("\n"))
  if (screen.subcommands.length > 0) blocks.push(paragraph(`Run \`${screen.path} <command> --help\` for a command's flags.`, cols))
  return blocks.join("\n\n")
}

// ---------------------------------------------------------------------------
// Usage errors
// ---------------------------------------------------------------------------

const quoted = (values: ReadonlyArray<string>) => values.map((v) => `'${v}'`).join(", ")

/**
 * A usage error of the parser as one line, e.g. `--max-tokens: "abc" is not
 * a whole number` (the wording of the 3 edition where effect/cli's differs).
 *
 * @since 0.1.0
 * @category errors
 */
export const usageLine = (error: CliError.CliError): string => {
  switch (error._tag) {
    case "ShowHelp":
      return error.errors.map(usageLine).join("; ") || "help requested"
    case "UnknownSubcommand": {
      const parent = (error.parent ?? ["switchboard"]).join(" ")
      return `Invalid subcommand for ${parent}: '${error.subcommand}'${
        error.suggestions.length > 0 ? ` — did you mean ${quoted(error.suggestions)}?` : ""
      }`
    }
    case "UnrecognizedOption":
      return `Received unknown argument: '${error.option}'${
        error.suggestions.length > 0 ? ` — did you mean ${quoted(error.suggestions)}?` : ""
      }`
    case "UnexpectedArgument":
      return `Received unknown argument: ${quoted(error.arguments)}`
    case "MissingArgument":
      return `Missing argument <${error.argument}>`
    case "MissingOption":
      return `Missing flag --${error.option}`
    default:
      return error.message.replace(/\s+/g, " ").trim()
  }
}
