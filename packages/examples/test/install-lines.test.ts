/**
 * The docs' install lines as the consumer test reads them
 * (scripts/consumer/install-lines.mjs, which runs them from the tarballs):
 * checked here without installing, so that `pnpm test` catches a line that
 * names the Effect 3 edition without its mark, or a `@switchboard/*`
 * package that is not packed.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../..", import.meta.url))

interface Line {
  readonly page: string
  readonly line: number
  readonly text: string
  readonly skipped: string | undefined
}
interface InstallLines {
  readonly installLines: (root: string) => Promise<ReadonlyArray<Line>>
  readonly linesOf: (page: string, markdown: string) => ReadonlyArray<Line>
}
const load = async () => (await import(Path.join(root, "scripts/consumer/install-lines.mjs"))) as InstallLines

const publishable = new Set(
  Fs.readdirSync(Path.join(root, "packages"))
    .map((d) => Path.join(root, "packages", d, "package.json"))
    .filter((f) => Fs.existsSync(f))
    .map((f) => JSON.parse(Fs.readFileSync(f, "utf8")) as { name: string; private?: boolean })
    .filter((p) => p.private !== true)
    .map((p) => p.name)
)

describe("the docs' install lines", () => {
  it("every line for the Effect 3 edition is marked not run; every line run names packed packages", async () => {
    const lines = await (await load()).installLines(root)
    expect(lines.length).toBeGreaterThan(10)
    const effect3 = lines.filter((l) => /effect@\^3|@effect3\b/.test(l.text) && l.skipped === undefined)
    expect(effect3.map((l) => `${l.page}:${l.line}`)).toEqual([])
    const unknown = lines
      .filter((l) => l.skipped === undefined)
      .flatMap((l) => l.text.split(/\s+/).filter((a) => a.startsWith("@switchboard/")).map((a) => a.replace(/(.)@.*$/, "$1")))
      .filter((name) => !publishable.has(name))
    expect(unknown).toEqual([])
  })

  it("reads blocks, continuations, comments, spans and marks", async () => {
    const { linesOf } = await load()
    const page = [
      "```sh",
      "pnpm add a \\",
      "  b   # two packages",
      "```",
      "<!-- install: not run: an old edition -->",
      "```sh",
      "npm install old",
      "```",
      "<!-- install: before not run: the old way -->",
      "```sh",
      "# Before",
      "pnpm add old",
      "# After",
      "pnpm add new",
      "```",
      "Or `npm install -g c`, or `pnpm add d` <!-- install: not run: why -->.",
      "```ts",
      "// pnpm add e",
      "```"
    ].join("\n")
    expect(linesOf("p.md", page).map((l) => [l.line, l.text, l.skipped !== undefined])).toEqual([
      [2, "pnpm add a b", false],
      [7, "npm install old", true],
      [12, "pnpm add old", true],
      [14, "pnpm add new", false],
      [16, "npm install -g c", true],
      [16, "pnpm add d", true]
    ])
  })
})
