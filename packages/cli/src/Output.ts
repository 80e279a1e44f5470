/**
 * Terminal output shared by the commands: colour only on a terminal (and
 * never with `NO_COLOR`), raw writes for streamed text, tables, sizes, file
 * name slugs, cosine similarity.
 *
 * The inline styles are plain SGR codes, each closing only itself: they go
 * into streamed text, progress lines, table cells and the help's headings
 * (`Help.ts`).
 *
 * Every write goes through `shown`: text from the service, the disk or an
 * MCP peer may hold control characters (a window title, a cleared screen, a
 * line overwritten with `\r`), and none of them reaches the terminal as one.
 *
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { format } from "node:util"

/**
 * Where a command writes: `process.stdout` or `process.stderr`.
 *
 * @since 0.1.0
 * @category models
 */
export type Target = NodeJS.WriteStream

/**
 * Whether `target` takes ANSI styles: a terminal, without `NO_COLOR`, not `TERM=dumb`.
 *
 * @since 0.1.0
 * @category style
 */
export const colours = (target: Target): boolean =>
  target.isTTY === true && process.env["NO_COLOR"] === undefined && process.env["TERM"] !== "dumb"

const sgr = (open: number, close: number) => (text: string, target: Target = process.stdout) =>
  colours(target) ? `\x1b[${open}m${text}\x1b[${close}m` : text

/**
 * Wraps text in bold when the output is a terminal that takes colour.
 *
 * @since 0.1.0
 * @category style
 */
export const bold = sgr(1, 22)
/**
 * Wraps text in faint type when the output is a terminal that takes colour.
 *
 * @since 0.1.0
 * @category style
 */
export const dim = sgr(2, 22)
/**
 * Wraps text in red (errors) when the output is a terminal that takes colour.
 *
 * @since 0.1.0
 * @category style
 */
export const red = sgr(31, 39)
/**
 * Wraps text in green (success) when the output is a terminal that takes
 * colour.
 *
 * @since 0.1.0
 * @category style
 */
export const green = sgr(32, 39)
/**
 * Wraps text in yellow (warnings) when the output is a terminal that takes
 * colour.
 *
 * @since 0.1.0
 * @category style
 */
export const yellow = sgr(33, 39)
/**
 * Wraps text in cyan (names and addresses) when the output is a terminal
 * that takes colour.
 *
 * @since 0.1.0
 * @category style
 */
export const cyan = sgr(36, 39)

// The CLI's own styles (see `sgr` above), the only escape sequences it writes through `write`.
// eslint-disable-next-line no-control-regex
const ownStyle = /(\x1b\[(?:1|2|22|31|32|33|36|39)m)/
// C0 controls but tab and newline, a carriage return not ending a line, DEL, C1 controls, and the
// bidirectional embeddings, overrides and isolates, which reorder what follows on display (Trojan Source).
// eslint-disable-next-line no-control-regex
const control = /\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g
const escapeControls = (text: string) =>
  text.replace(control, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * Text as it may reach `target`: every control character shown escaped
 * (`\u001b`), but tab, newline (also as `\r\n`) and, to a target that takes
 * colour, the CLI's own styles. Whatever the service, a file or an MCP
 * peer said can neither move the cursor, clear the screen, set the window
 * title, overwrite a line nor reorder what follows (the bidirectional
 * overrides and isolates are shown escaped too).
 *
 * @since 1.1.0
 * @category writing
 */
export const shown = (text: string, target: Target = process.stdout): string =>
  colours(target)
    ? text.split(ownStyle).map((part, i) => (i % 2 === 1 ? part : escapeControls(part))).join("")
    : escapeControls(text)

/**
 * Text for a place that is one line (an error's line, a table cell, the
 * progress line): its line breaks shown escaped (`\u000a`), so the
 * service's text cannot add a line that looks like the CLI's own.
 *
 * @since 1.1.0
 * @category writing
 */
export const oneLine = (text: string): string => text.replace(/\r?\n/g, (brk) => (brk.length === 2 ? "\\u000d\\u000a" : "\\u000a"))

/**
 * Writes text without a newline (for streamed replies), through `shown`.
 *
 * @since 0.1.0
 * @category writing
 */
export const write = (text: string, target: Target = process.stdout): Effect.Effect<void> =>
  Effect.sync(() => {
    target.write(shown(text, target))
  })

/**
 * Runs `self` with Effect's log lines on stderr, written through `shown`
 * like every other output: a log line may quote the service (a task id, an
 * error's message).
 *
 * @since 1.1.0
 * @category writing
 */
export const logsToStderr = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(
    Effect.provideService(Logger.LogToStderr, true),
    Effect.provideService(Console.Console, {
      ...globalThis.console,
      error: (...args: ReadonlyArray<unknown>) => {
        process.stderr.write(`${shown(format(...args), process.stderr)}\n`)
      }
    })
  )

/**
 * Writes one line to stdout.
 *
 * @since 0.1.0
 * @category writing
 */
export const line = (text = ""): Effect.Effect<void> => write(`${text}\n`)

/**
 * Writes one line to stderr.
 *
 * @since 0.1.0
 * @category writing
 */
export const errorLine = (text: string): Effect.Effect<void> => write(`${text}\n`, process.stderr)

/**
 * Prefixes every line of a streamed text with `indent`, whatever the chunk
 * boundaries: returns a function to call with each chunk.
 *
 * @since 0.1.0
 * @category writing
 */
export const indenter = (indent: string) => {
  let atLineStart = true
  return (chunk: string): string => {
    let out = ""
    for (const char of chunk) {
      if (atLineStart && char !== "\n") out += indent
      out += char
      atLineStart = char === "\n"
    }
    return out
  }
}

const ownStyles = new RegExp(ownStyle.source, "g")

/**
 * The width of a string on screen, ANSI styles excluded, control characters
 * counted as `shown` writes them.
 *
 * @since 0.1.0
 * @category tables
 */
export const visibleLength = (text: string): number => [...escapeControls(text.replace(ownStyles, ""))].length

/**
 * Rows as aligned columns, the first row being the header, each line
 * prefixed by `indent`.
 *
 * @since 0.1.0
 * @category tables
 */
export const table = (cells: ReadonlyArray<ReadonlyArray<string>>, indent = ""): string => {
  const rows = cells.map((row) => row.map(oneLine))
  const widths: Array<number> = []
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell))))
  return rows
    .map((row) =>
      indent +
      row.map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - visibleLength(cell)))).join("  ")
    )
    .join("\n")
}

/**
 * `65536` → `64.0 KiB`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const bytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / (1024 * 1024)).toFixed(1)} MiB`

/**
 * `1234` → `1.2 s`, `65000` → `1 min 5 s`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const seconds = (millis: number): string => {
  if (millis < 60_000) return `${(millis / 1000).toFixed(1)} s`
  const total = Math.round(millis / 1000)
  return `${Math.floor(total / 60)} min ${total % 60} s`
}

/**
 * A file-name-safe slug of a prompt: `"A fox, in snow!"` → `a-fox-in-snow`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const slug = (text: string, max = 40): string => {
  const s = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, max)
    .replace(/-+$/, "")
  return s === "" ? "image" : s
}

/**
 * `2025-01-31T12:34:56Z` → `20250131-123456`, in local time.
 *
 * @since 0.1.0
 * @category formatting
 */
export const stamp = (millis: number): string => {
  const d = new Date(millis)
  const two = (n: number) => String(n).padStart(2, "0")
  return `${d.getFullYear()}${two(d.getMonth() + 1)}${two(d.getDate())}-${two(d.getHours())}${two(d.getMinutes())}${
    two(d.getSeconds())
  }`
}

/**
 * A text cut to `max` characters with an ellipsis, on one line.
 *
 * @since 0.1.0
 * @category formatting
 */
export const truncate = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

/**
 * Cosine similarity of two vectors of the same length; 0 when either is zero.
 *
 * @since 0.1.0
 * @category math
 */
export const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  let dot = 0, na = 0, nb = 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}
