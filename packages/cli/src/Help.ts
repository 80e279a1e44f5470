/**
 * `--help` that follows the terminal, and usage errors as one line.
 *
 * @effect/cli's own help prints ANSI codes whatever the output, pads the
 * command list to its longest usage line, names a subcommand without the
 * program (`$ chat …`) and marks repeatable flags as required. Here the help
 * document it builds (`HelpDoc`) is read for its text and laid out again
 * with @effect/printer: wrapped to the terminal's width, coloured with
 * @effect/printer-ansi only where `Output.colours` allows.
 *
 * @since 0.1.0
 */
import * as Descriptor from "@effect/cli/CommandDescriptor"
import type * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as ValidationError from "@effect/cli/ValidationError"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Doc from "@effect/printer/Doc"
import * as Ansi from "@effect/printer-ansi/Ansi"
import * as AnsiDoc from "@effect/printer-ansi/AnsiDoc"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Output from "./Output.js"

// ---------------------------------------------------------------------------
// Reading a HelpDoc
// ---------------------------------------------------------------------------

/** The plain text of a span. */
export const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    default:
      return spanText(span.value)
  }
}

/** The paragraphs of a document, in order, as plain text. */
const paragraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> => {
  switch (doc._tag) {
    case "Paragraph":
    case "Header":
      return [spanText(doc.value)]
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
    default:
      return []
  }
}

/** One argument or flag of a command, as the help lists it. */
export interface Entry {
  /** `--model text`, `<prompt>`. */
  readonly term: string
  readonly description: string
  readonly optional: boolean
  readonly repeated: boolean
}

/** The parts of a command's help: what @effect/cli says about each flag, minus its boilerplate. */
export interface Parts {
  readonly description: string
  readonly args: ReadonlyArray<Entry>
  readonly options: ReadonlyArray<Entry>
}

// What @effect/cli adds to every entry: the type of the value, then whether
// it is optional or repeated. The first is noise; the second goes into the
// usage line and the "(repeatable)" mark.
const typeNotes = /^(A user-defined piece of text( that is confidential)?|An integer|A floating point number|A true or false value|A date|One of the following: .*)\.$/
const optionalNote = /^This setting is optional\./
const repeatedNote = /^This (option|argument) (may|must) be repeated/

const entry = (term: Span.Span, body: HelpDoc.HelpDoc): Entry => {
  const notes = paragraphs(body)
  const repeated = notes.some((note) => repeatedNote.test(note))
  return {
    term: spanText(term).replace(/(\s*\.\.\.|\s+\d+\+)$/, "").replace(/^\((.*)\)$/, "$1").trim(),
    description: notes.filter((n) => !typeNotes.test(n) && !optionalNote.test(n) && !repeatedNote.test(n)).join(" "),
    optional: notes.some((note) => optionalNote.test(note) || /zero or more times/.test(note)),
    repeated
  }
}

/** The description, arguments and options of a command's help document. */
export const parts = (doc: HelpDoc.HelpDoc): Parts => {
  let section = ""
  let description = ""
  const args: Array<Entry> = []
  const options: Array<Entry> = []
  const walk = (d: HelpDoc.HelpDoc): void => {
    switch (d._tag) {
      case "Sequence":
        walk(d.left)
        walk(d.right)
        return
      case "Header":
        section = spanText(d.value)
        return
      case "Paragraph":
        if (section === "DESCRIPTION") description = [description, spanText(d.value)].filter((s) => s !== "").join(" ")
        return
      case "DescriptionList":
        for (const [term, body] of d.definitions) (section === "ARGUMENTS" ? args : options).push(entry(term, body))
        return
      default:
        return
    }
  }
  walk(doc)
  return { description, args, options }
}

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

/** A command's subcommands: name and description. */
export interface Subcommand {
  readonly name: string
  readonly description: string
}

/** Everything one help screen shows. */
export interface Screen extends Parts {
  /** `switchboard chat`. */
  readonly path: string
  readonly subcommands: ReadonlyArray<Subcommand>
  readonly version?: string | undefined
}

const usageWord = (e: Entry): string =>
  e.repeated ? (e.optional ? `[${e.term}]...` : `${e.term}...`) : e.optional ? `[${e.term}]` : e.term

const helpFlag: Entry = { term: "-h, --help", description: "Show this help", optional: true, repeated: false }
const versionFlag: Entry = { term: "--version", description: "Show the version", optional: true, repeated: false }

/**
 * A term in a column of `column` characters, its description wrapped beside
 * it, or under it when the term is too long. (Padded by hand: the printer's
 * `fillBreak` measures by laying out again, which grows too slow here.)
 */
const definition = (term: string, description: string, column: number): Doc.Doc<Ansi.Ansi> => {
  const text = Doc.align(Doc.reflow(description))
  return term.length < column
    ? Doc.cat(Doc.text(term.padEnd(column)), text)
    : Doc.vcat([Doc.text(term), Doc.indent(text, column)])
}

const describeEntry = (e: Entry): string => e.repeated && e.term.startsWith("-") ? `${e.description} (repeatable)` : e.description

/** A section: its title, then its items indented. */
const section = (title: string, items: ReadonlyArray<Doc.Doc<Ansi.Ansi>>): ReadonlyArray<Doc.Doc<Ansi.Ansi>> => [
  Doc.annotate(Doc.text(title), Ansi.bold),
  ...items.map((item) => Doc.indent(item, 2))
]

/**
 * The help screen as paragraphs of lines: each document is laid out on its
 * own (the printer slows down sharply on one long document of many
 * wrapped paragraphs), an empty array stands for a blank line.
 *
 * @since 0.1.0
 * @category layout
 */
export const documents = (screen: Screen): ReadonlyArray<ReadonlyArray<Doc.Doc<Ansi.Ansi>>> => {
  const options = [...screen.options, helpFlag]
  const words = [
    ...(screen.subcommands.length > 0 ? ["<command>"] : []),
    ...screen.options.map(usageWord),
    ...screen.args.map(usageWord)
  ]
  const column = Math.min(24, Math.max(...[...screen.args, ...options].map((e) => e.term.length)) + 2)
  const blocks: Array<ReadonlyArray<Doc.Doc<Ansi.Ansi>>> = [
    [Doc.reflow(screen.version === undefined ? screen.description : `${screen.description} (version ${screen.version})`)],
    section("USAGE", [Doc.hang(Doc.fillSep([Doc.text(screen.path), ...words.map(Doc.text)]), 4)])
  ]
  if (screen.subcommands.length > 0) {
    const nameColumn = Math.max(...screen.subcommands.map((c) => c.name.length)) + 2
    blocks.push(section("COMMANDS", screen.subcommands.map((c) => definition(c.name, c.description, nameColumn))))
  }
  if (screen.args.length > 0) blocks.push(section("ARGUMENTS", screen.args.map((e) => definition(e.term, describeEntry(e), column))))
  blocks.push(section("OPTIONS", options.map((e) => definition(e.term, describeEntry(e), column))))
  if (screen.subcommands.length > 0) blocks.push([Doc.reflow(`Run \`${screen.path} <command> --help\` for a command's flags.`)])
  return blocks
}

/**
 * The help screen as text for `target`: wrapped to its width, ANSI styles
 * only where it takes colour.
 *
 * @since 0.1.0
 * @category layout
 */
export const render = (screen: Screen, target: Output.Target = process.stdout): string => {
  const options = { lineWidth: width(target), ribbonFraction: 1 }
  const colour = Output.colours(target)
  const one = (doc: Doc.Doc<Ansi.Ansi>) =>
    colour ? AnsiDoc.render(doc, { style: "pretty", options }) : Doc.render(Doc.unAnnotate(doc), { style: "pretty", options })
  return documents(screen).map((block) => block.map(one).join("\n")).join("\n\n")
}

// ---------------------------------------------------------------------------
// Finding the command asked about
// ---------------------------------------------------------------------------

/**
 * `--help` or `-h` among the arguments (before a `--`).
 *
 * @since 0.1.0
 * @category help
 */
export const requested = (args: ReadonlyArray<string>): boolean => {
  const end = args.indexOf("--")
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h")
}

/**
 * A command's own subcommands (none for a command without: @effect/cli then
 * lists the command itself), in the order the command gives them.
 * `getSubcommands` is a HashMap, which loses that order; @effect/cli's
 * descriptor keeps it in `children` (in hash order if it ever stops).
 */
const childrenOf = (command: Descriptor.Command<unknown>): ReadonlyArray<readonly [string, Descriptor.Command<unknown>]> => {
  const children = [...HashMap.toEntries(Descriptor.getSubcommands(command))]
  const own = Descriptor.getNames(command)
  if (children.some(([name]) => HashSet.has(own, name))) return []
  const given = (command as { readonly children?: unknown }).children
  const order = Array.isArray(given) ? given.map((child: Descriptor.Command<unknown>) => nameOf(child)) : []
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length)
  return children.sort(([a], [b]) => rank(a) - rank(b))
}

/** @effect/cli's built-in flags (completions, wizard, log level) are not offered: only --help and --version. */
const config = CliConfig.make({ showBuiltIns: false })

const nameOf = (descriptor: Descriptor.Command<unknown>): string => [...Descriptor.getNames(descriptor)][0] ?? ""
const describe = (descriptor: Descriptor.Command<unknown>): Subcommand => ({
  name: nameOf(descriptor),
  description: parts(Descriptor.getHelp(descriptor, config)).description
})

/**
 * The help screen for the command named at the start of `args` (after the
 * program's own name): `chat --help` → `switchboard chat`'s. `commands` are
 * the program's subcommands, so that a subcommand's own subcommands are
 * found too.
 *
 * @since 0.1.0
 * @category help
 */
export const screen = (
  program: { readonly name: string; readonly version: string; readonly descriptor: Descriptor.Command<unknown> },
  commands: ReadonlyArray<Descriptor.Command<unknown>>,
  args: ReadonlyArray<string>
): Screen => {
  const top = commands.find((c) => HashSet.has(Descriptor.getNames(c), args[0] ?? ""))
  if (top === undefined) {
    const help = parts(Descriptor.getHelp(program.descriptor, config))
    return {
      ...help,
      options: [...help.options, versionFlag],
      path: program.name,
      subcommands: commands.map(describe),
      version: program.version
    }
  }
  const children = childrenOf(top)
  const child = children.find(([name]) => name === args[1])
  const help = parts(Descriptor.getHelp(child?.[1] ?? top, config))
  return {
    ...help,
    path: [program.name, nameOf(top), ...(child === undefined ? [] : [child[0]])].join(" "),
    subcommands: child === undefined ? children.map(([, d]) => describe(d)) : []
  }
}

// ---------------------------------------------------------------------------
// Usage errors
// ---------------------------------------------------------------------------

const fallback: Record<string, string> = {
  MissingSubcommand: "a command is missing",
  CommandMismatch: "unknown command",
  NoBuiltInMatch: "unknown flag"
}

/**
 * A usage error of the parser as one line, e.g. `--max-tokens: "abc" is not
 * a whole number`.
 *
 * @since 0.1.0
 * @category errors
 */
export const usageLine = (error: ValidationError.ValidationError): string => {
  const text = paragraphs(error.error).join(" ").replace(/\s+/g, " ").trim()
  return text === "" ? (fallback[error._tag] ?? "invalid command line") : text
}

/**
 * Prints the help screen for `args` to stdout.
 *
 * @since 0.1.0
 * @category help
 */
export const print = (...input: Parameters<typeof screen>): Effect.Effect<void> =>
  Effect.suspend(() => Output.write(`${render(screen(...input))}\n`))
