/**
 * Sections of docs/performance.md written by a bench of their own (`pnpm
 * bench:pacing`, `node scripts/install-footprint.mjs`), kept when `pnpm bench`
 * regenerates the page.
 */

/** The sections measured on their own, by title. */
export const ownSections = ["## Pacing from the rate limits", "## Install footprint"] as const

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

/** The regenerated page `next`, with the own sections of the page it replaces. */
export const keepOwnSections = (previous: string, next: string): string =>
  ownSections.reduce((text, title) => {
    const section = sectionOf(previous, title)
    return section === undefined ? text : withSection(text, section)
  }, next)
