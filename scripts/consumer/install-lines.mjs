/**
 * Every install line of the docs, run as written (docs/packaging.md, "The
 * consumer test"). A line is a pnpm add or npm install command of
 * README.md, docs/*.md or packages/*\/README.md: a line of a ```sh block
 * (backslash continuations joined, a trailing `# comment` dropped) or a code
 * span in the text. Each runs with the package manager it names in a new
 * directory, `@switchboard/*` names (with any version) taken from the packed
 * tarballs, the other names from the registry (through the local cache).
 *
 * A line that cannot run against the tarballs (the Effect 3 edition, the
 * "before" of a migration) is skipped only when the markdown says so:
 *   - `<!-- install: not run: why -->` on the line before a block skips it;
 *   - `<!-- install: before not run: why -->` before a block skips its lines
 *     between `# before` and `# after`, and runs the rest;
 *   - the same `<!-- install: not run: why -->` on the line of a code span.
 * Every other line runs; one that fails fails the consumer test.
 */
import { existsSync } from "node:fs"
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"

const command = /^(pnpm add|npm install|npm i)(\s|$)/
const notRun = /<!--\s*install:\s*not run:\s*\S[^>]*-->/
const beforeNotRun = /<!--\s*install:\s*before not run:\s*\S[^>]*-->/

/** The markdown files whose install lines are run. */
const pages = async (root) => {
  const inDir = async (dir) =>
    existsSync(join(root, dir)) ? (await readdir(join(root, dir))).filter((f) => f.endsWith(".md")).sort().map((f) => `${dir}/${f}`) : []
  const packages = (await readdir(join(root, "packages"))).sort().filter((d) => existsSync(join(root, "packages", d, "README.md")))
  return ["README.md", ...(await inDir("docs")), ...packages.map((d) => `packages/${d}/README.md`)]
}

/** The install lines of one page: `{ page, line, text, skipped }` (`skipped` is the mark's reason). */
export const linesOf = (page, markdown) => {
  const out = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*```(\w*)/.exec(lines[i])
    if (fence) {
      const previous = lines.slice(0, i).reverse().find((l) => l.trim() !== "") ?? ""
      const shell = ["sh", "bash", "shell"].includes(fence[1])
      let end = i + 1
      while (end < lines.length && !/^\s*```/.test(lines[end])) end++
      if (shell) {
        const whole = notRun.exec(previous)?.[0]
        const before = beforeNotRun.exec(previous)?.[0]
        let section = "none"
        for (let j = i + 1; j < end; j++) {
          const first = j + 1
          let text = lines[j].trim()
          while (text.endsWith("\\") && j + 1 < end) text = `${text.slice(0, -1).trim()} ${lines[++j].trim()}`
          if (/^#\s*before\b/i.test(text)) section = "before"
          if (/^#\s*after\b/i.test(text)) section = "after"
          text = text.replace(/\s+#.*$/, "").trim()
          if (!command.test(text)) continue
          const skipped = whole ?? (section === "before" ? before : undefined)
          out.push({ page, line: first, text, skipped })
        }
      }
      i = end
      continue
    }
    for (const span of lines[i].matchAll(/`([^`]+)`/g)) {
      const text = span[1].trim()
      if (command.test(text)) out.push({ page, line: i + 1, text, skipped: notRun.exec(lines[i])?.[0] })
    }
  }
  return out
}

/** Every install line of the docs. */
export const installLines = async (root) => {
  const all = []
  for (const page of await pages(root)) all.push(...linesOf(page, await readFile(join(root, page), "utf8")))
  return all
}

/** The `@switchboard/*` packages a package depends on, directly or not. */
const closure = async (names, packed) => {
  const byName = new Map(packed.map((p) => [p.name, p]))
  const seen = new Set()
  const visit = async (name) => {
    if (seen.has(name) || !byName.has(name)) return
    seen.add(name)
    const manifest = JSON.parse(await readFile(join(byName.get(name).path, "package.json"), "utf8"))
    for (const dep of Object.keys(manifest.dependencies ?? {})) await visit(dep)
  }
  for (const name of names) await visit(name)
  return seen
}

/**
 * The line's arguments, `@switchboard/*` names (any version) replaced by
 * their tarballs. npm also gets the tarballs of the packages those depend
 * on, which the registry would give once they are published: npm applies no
 * `overrides` to `-g`, and refuses one that differs from a direct dependency.
 */
const argumentsOf = async (text, manager, packed) => {
  const tarballs = Object.fromEntries(packed.map((p) => [p.name, p.tarball]))
  const words = text.split(/\s+/)
  const named = []
  const args = words.slice(1, 2)
  for (const arg of words.slice(2)) {
    const name = /^(@switchboard\/[\w-]+)(@.*)?$/.exec(arg)?.[1]
    if (name === undefined) {
      args.push(arg)
      continue
    }
    if (tarballs[name] === undefined) throw new Error(`${arg}: no packed @switchboard package of that name`)
    named.push(name)
    args.push(tarballs[name])
  }
  if (manager === "npm") {
    for (const name of await closure(named, packed)) if (!named.includes(name)) args.push(tarballs[name])
  }
  return args
}

/**
 * Runs every install line that is not marked, each distinct one once, in a
 * directory of its own under `work`; `run(command, args, { cwd, env })`
 * rejects on failure. Returns what ran and what was skipped, with why.
 */
export const runInstallLines = async ({ root, work, packed, run, cache, log }) => {
  const lines = await installLines(root)
  const distinct = new Map()
  for (const line of lines.filter((l) => l.skipped === undefined)) {
    const key = line.text.replace(/\s+/g, " ")
    distinct.set(key, [...(distinct.get(key) ?? []), `${line.page}:${line.line}`])
  }
  // pnpm: a tarball's own @switchboard/* dependencies come from the tarballs too.
  const overrides = Object.fromEntries(packed.map((p) => [p.name, `file:${p.tarball}`]))
  let n = 0
  for (const [text, where] of distinct) {
    const dir = join(work, `install-line-${++n}`)
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: `install-line-${n}`, private: true, type: "module", pnpm: { overrides } }, null, 2))
    const manager = text.split(" ")[0]
    const args = await argumentsOf(text, manager, packed)
    const extra = manager === "npm" ? [cache, "--no-audit", "--no-fund", "--loglevel=error"] : [cache]
    // `npm install -g` installs into the directory, not the machine's prefix.
    const env = { npm_config_prefix: join(dir, "global") }
    try {
      await run(manager, [...args, ...extra], { cwd: dir, env })
    } catch (error) {
      throw new Error(`the install line \`${text}\` (${where.join(", ")}) failed:\n${error.message}`)
    }
    log(`6. install line ran: ${text} (${where.join(", ")})`)
  }
  const skipped = lines.filter((l) => l.skipped !== undefined)
  return { ran: distinct.size, skipped }
}
