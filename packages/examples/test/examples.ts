/**
 * The examples README.md and docs/*.md show, read from the markdown (see
 * docs.test.ts for the markers).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))
export const src = Path.resolve(here, "../src")
const root = Path.resolve(here, "../../..")

export interface Shown {
  readonly doc: string
  /** Under src/, or a test file under test/. */
  readonly file: string
  /** The test that runs it, when it is not run here. */
  readonly runBy: string | undefined
  readonly code: string
  readonly output: string | undefined
}

const marked = /<!-- example: ([^\s,]+)(?:, run by (\S+))? -->\n```(?:ts|js)\n([^]*?)```(?:\n\nPrints:\n\n```text\n([^]*?)```)?/g

const docs = ["README.md", ...Fs.readdirSync(Path.join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]
const text = (doc: string) => Fs.readFileSync(Path.join(root, doc), "utf8")
export const shown: ReadonlyArray<Shown> = docs.flatMap((doc) =>
  [...text(doc).matchAll(marked)].map((m) => ({ doc, file: m[1]!, runBy: m[2], code: m[3]!, output: m[4] }))
)
export const pathOf = (file: string) => file.startsWith("test/") ? Path.resolve(here, "..", file) : Path.join(src, file)

/** `doc:line` of every ```ts or ```js block not marked as an example or a fragment. */
export const unmarked = docs.flatMap((doc) => {
  const lines = text(doc).split("\n")
  return lines.flatMap((line, i) =>
    /^```(ts|js)$/.test(line) && !/^<!-- (example|fragment): .+ -->$/.test(lines[i - 1] ?? "") ? [`${doc}:${i + 1}`] : []
  )
})

