/**
 * Sections of docs/performance.md measured by a bench of their own, each
 * with its command (`pnpm bench:pacing`, `pnpm bench:testing-kit`, the install footprint's
 * script): the
 * command prints its section and writes it into the page; `pnpm bench`
 * keeps every one of them when it regenerates the rest, so no regeneration
 * drops one. A section of the page comes from a figure of `pnpm bench`
 * (`src/figures/*`) or from one of these; none is written by hand.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { rootDir } from "./machine.js"

/** The sections measured on their own: their titles and the command that writes each. */
export const ownSections = [
  { title: "## Pacing from the rate limits", command: "pnpm bench:pacing", script: "packages/bench/src/pacing.ts" },
  { title: "## The testing kit", command: "pnpm bench:testing-kit", script: "packages/bench/src/testing-kit.ts" },
  { title: "## Install footprint", command: "pnpm build && node scripts/install-footprint.mjs", script: "scripts/install-footprint.mjs" }
] as const

export type OwnSection = (typeof ownSections)[number]

/** The section titled `title` in `text` (up to the next `## `), or `undefined`. */
export const sectionOf = (text: string, title: string): string | undefined => {
  const start = text.indexOf(`\n${title}\n`)
  if (start < 0) return undefined
  const next = text.indexOf("\n## ", start + title.length + 2)
  return text.slice(start + 1, next < 0 ? undefined : next + 1).trimEnd() + "\n"
}

/** `text` with `section` (which starts with its title) in place of its old one, or before "## Missed targets", or at the end. */
export const withSection = (text: string, section: string): string => {
  const title = section.slice(0, section.indexOf("\n"))
  const old = sectionOf(text, title)
  if (old !== undefined) return text.replace(old, section)
  const missed = text.indexOf("\n## Missed targets\n")
  return missed < 0 ? `${text.trimEnd()}\n\n${section}` : `${text.slice(0, missed + 1)}${section}\n${text.slice(missed + 1)}`
}

/**
 * The regenerated page `next`, with the own sections of the page it
 * replaces; `missing` names those the old page lacked (their commands were
 * never run there), for `pnpm bench` to say which command writes each.
 */
export const keepOwnSections = (previous: string, next: string): { readonly text: string; readonly missing: ReadonlyArray<OwnSection> } =>
  ownSections.reduce<{ readonly text: string; readonly missing: ReadonlyArray<OwnSection> }>((page, own) => {
    const section = sectionOf(previous, own.title)
    return section === undefined ? { ...page, missing: [...page.missing, own] } : { ...page, text: withSection(page.text, section) }
  }, { text: next, missing: [] })

/** How an own section begins: its command, the script, the date and the machine's load. */
export const measured = (own: OwnSection): string =>
  `Measured by \`${own.command}\` (${own.script}) on ${new Date().toISOString().slice(0, 10)}, ` +
  `${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(2)} at the end.`

/** The rounds a script was asked for (its first argument that is a count), else `fallback`. */
export const roundsArg = (fallback: number): number => {
  const given = process.argv.slice(2).find((arg) => /^[1-9][0-9]*$/.test(arg))
  return given === undefined ? fallback : Number(given)
}

/** Prints `section` and, unless `--no-write` was given, writes it into docs/performance.md. */
export const publish = (section: string): void => {
  console.log(section)
  if (process.argv.includes("--no-write")) return
  const file = path.join(rootDir, "docs", "performance.md")
  fs.writeFileSync(file, withSection(fs.readFileSync(file, "utf8"), section))
  console.log(`wrote the section into ${path.relative(rootDir, file)}`)
}
