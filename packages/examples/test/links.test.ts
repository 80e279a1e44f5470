/**
 * Every link of the READMEs (root and packages) and of docs/*.md resolves:
 * a relative link names a file or directory that exists, and its `#anchor`
 * a heading of that page (GitHub's slugs); a package README's links also
 * resolve inside the package's tarball (its `files`), where npm shows it, so
 * they name files the package ships or absolute addresses. The API
 * reference's pages (packages/<pkg>/docs/api) are checked the same way.
 *
 * And the reference is up to date: its index's hash of the sources matches
 * (`node scripts/docs/api.mjs --check`; `pnpm docs:api` regenerates it).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const markdownIn = (dir: string): Array<string> =>
  Fs.existsSync(Path.join(root, dir))
    ? Fs.readdirSync(Path.join(root, dir)).filter((f) => f.endsWith(".md")).map((f) => Path.posix.join(dir, f))
    : []

const packageDirs = Fs.readdirSync(Path.join(root, "packages")).filter((d) =>
  Fs.existsSync(Path.join(root, "packages", d, "package.json"))
)

const pages = [
  "README.md",
  ...markdownIn("docs"),
  ...packageDirs.flatMap((d) => [
    ...markdownIn(`packages/${d}`),
    ...markdownIn(`packages/${d}/docs/api`)
  ])
]

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
export const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fenced = false
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    if (fenced) continue
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading === null) continue
    const text = heading[1]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "")
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/** The link targets of a page, outside code blocks and code spans. */
export const linksOf = (markdown: string): Array<string> => {
  const out: Array<string> = []
  let fenced = false
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    if (fenced) continue
    const text = line.replace(/`[^`]*`/g, "")
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(match[1]!)
    for (const match of text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)) out.push(match[1]!)
  }
  return out
}

const read = (file: string) => Fs.readFileSync(Path.join(root, file), "utf8")

/** What is wrong with one link of `page`, or undefined. */
const problem = (page: string, target: string): string | undefined => {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    return /^https?:\/\/github\.com\/switchboard-sdk\//.test(target)
      ? `${target}: the placeholder repository address (no published version has it)`
      : undefined
  }
  const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined]
  const file = pathPart === "" ? page : Path.posix.normalize(Path.posix.join(Path.posix.dirname(page), decodeURI(pathPart)))
  if (file.startsWith("..")) return `${target}: outside the repository`
  const full = Path.join(root, file)
  if (!Fs.existsSync(full)) return `${target}: no such file (${file})`
  if (anchor !== undefined && anchor !== "" && file.endsWith(".md") && !anchorsOf(read(file)).has(anchor)) {
    return `${target}: no heading #${anchor} in ${file}`
  }
  return undefined
}

/** Whether `file` (relative to the package) is in the package's tarball, per its `files`. */
const shipped = (pkgDir: string, file: string): boolean => {
  const always = ["package.json", "README.md", "LICENSE"]
  if (always.includes(file)) return true
  const manifest = JSON.parse(read(`${pkgDir}/package.json`)) as { files?: ReadonlyArray<string> }
  const entries = manifest.files ?? []
  const included = entries.filter((e) => !e.startsWith("!")).some((e) => file === e || file.startsWith(`${e}/`))
  return included && !file.includes(".test.")
}

describe("links", () => {
  it.each(pages)("%s: every link resolves", (page) => {
    const problems = linksOf(read(page)).flatMap((target) => {
      const found = problem(page, target)
      return found === undefined ? [] : [found]
    })
    expect(problems).toEqual([])
  })

  const readmes = packageDirs
    .filter((d) => Fs.existsSync(Path.join(root, "packages", d, "README.md")))
    .filter((d) => (JSON.parse(read(`packages/${d}/package.json`)) as { private?: boolean }).private !== true)
  it.each(readmes)("packages/%s/README.md: every relative link is shipped in the tarball", (dir) => {
    const pkgDir = `packages/${dir}`
    const outside = linksOf(read(`${pkgDir}/README.md`))
      .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith("#"))
      .map((t) => Path.posix.normalize(t.split("#")[0]!))
      .filter((file) => file.startsWith("..") || !shipped(pkgDir, file))
    expect(outside).toEqual([])
  })

  it("the anchors follow GitHub's slugs", () => {
    expect([...anchorsOf("# A `b` c\n## Why? (1)\n## Why? (1)\n```\n# not\n```\n")]).toEqual(["a-b-c", "why-1", "why-1-1"])
  })
})

describe("API reference", () => {
  it("is up to date with the sources (else run `pnpm docs:api`)", async () => {
    const api = (await import(Path.join(root, "scripts/docs/api.mjs"))) as { stale: () => Promise<ReadonlyArray<string>> }
    expect(await api.stale()).toEqual([])
  })
})
