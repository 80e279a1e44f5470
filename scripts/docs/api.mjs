#!/usr/bin/env node
/**
 * The API reference (docs/packaging.md, "The API reference"): runs Effect's
 * docgen in every publishable package that has a `docgen.json`, which fails
 * on an export without a description or an `@since`, and on an `@example`
 * that does not type-check or run; then turns its pages into plain Markdown
 * under `packages/<pkg>/docs/api/` (one page per module, `README.md` the
 * index), which ships in the package's tarball.
 *
 * The index records a hash of what the pages are made from (the package's
 * `src/`, its `docgen.json`, this script): `--check` compares it without
 * running docgen (a second), for `pnpm test`; CI runs the generation itself
 * and fails on a difference (`git diff --exit-code`).
 *
 * Usage: node scripts/docs/api.mjs [--check] [package-dir-name ...]
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync } from "node:fs"
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { join, relative } from "node:path"
import process from "node:process"
import { fileURLToPath, URL } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))
const self = fileURLToPath(import.meta.url)
const stampPattern = /<!-- api-inputs: ([0-9a-f]{64}) -->/

/** The packages with a reference: not private, with a docgen.json. */
export const referencePackages = async () => {
  const dirs = (await readdir(join(root, "packages"))).sort()
  const found = []
  for (const dir of dirs) {
    const pkgDir = join(root, "packages", dir)
    if (!existsSync(join(pkgDir, "docgen.json"))) continue
    const manifest = JSON.parse(await readFile(join(pkgDir, "package.json"), "utf8"))
    if (manifest.private !== true) found.push({ dir, pkgDir, name: manifest.name })
  }
  return found
}

const filesUnder = async (dir) => {
  const out = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...(await filesUnder(path)))
    else if (entry.name.endsWith(".ts")) out.push(path)
  }
  return out.sort()
}

/** What the pages are made from, hashed: a change to any of it makes them stale. */
export const inputsHash = async (pkgDir) => {
  const hash = createHash("sha256")
  const files = [self, join(pkgDir, "docgen.json"), ...(await filesUnder(join(pkgDir, "src")))]
  for (const file of files) {
    hash.update(relative(root, file).replaceAll("\\", "/"))
    hash.update("\0")
    hash.update(await readFile(file))
    hash.update("\0")
  }
  return hash.digest("hex")
}

/** The packages whose pages do not match their inputs, with why. */
export const stale = async () => {
  const problems = []
  for (const { dir, pkgDir } of await referencePackages()) {
    const index = join(pkgDir, "docs", "api", "README.md")
    if (!existsSync(index)) {
      problems.push(`${dir}: no docs/api/README.md`)
      continue
    }
    const stamp = stampPattern.exec(await readFile(index, "utf8"))?.[1]
    if (stamp !== (await inputsHash(pkgDir))) problems.push(`${dir}: its sources changed since the reference was made`)
  }
  return problems
}

const run = (command, args, cwd, env) =>
  new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")} failed in ${relative(root, cwd)}:\n${stdout}\n${stderr}`))
      else resolve(stdout)
    })
  })

// docgen's pages carry Jekyll front matter and HTML for its site theme; npm
// and GitHub show plain Markdown, so both go.
const plainPage = (text) =>
  text
    .replace(/^(\*\*\*|---)\n[\s\S]*?\n---\n+/, "")
    .replace(/<h2 class="text-delta">Table of contents<\/h2>/, "## Table of contents")
    .replace(/^## (\w+) overview$/m, "# $1")
    .trimEnd() + "\n"

const overview = (page) => {
  const body = page.split("\n").slice(1).join("\n").trim()
  const first = body.split(/\n\n/)[0]?.replace(/\s+/g, " ").trim() ?? ""
  return first.startsWith("Added in") ? "" : first
}

const generate = async ({ dir, pkgDir, name }) => {
  const docs = join(pkgDir, "docs")
  // docgen owns docs/ while it runs (modules/, examples/, index.md, _config.yml).
  await Promise.all(["modules", "examples", "index.md", "_config.yml"].map((f) => rm(join(docs, f), { recursive: true, force: true })))
  const started = Date.now()
  await run(join(root, "node_modules", ".bin", "docgen"), [], pkgDir, {
    // Examples import the package by name: run them on src/, not on dist/.
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --conditions=@switchboard/source`.trim()
  })
  const modulesDir = join(docs, "modules")
  const api = join(docs, "api")
  await rm(api, { recursive: true, force: true })
  await mkdir(api, { recursive: true })
  const entries = []
  const pages = (await readdir(modulesDir)).filter((f) => f.endsWith(".ts.md")).sort()
  // The package's root entry first, then its modules in order.
  pages.sort((a, b) => Number(b === "index.ts.md") - Number(a === "index.ts.md"))
  for (const file of pages) {
    const module = file.slice(0, -".ts.md".length)
    const page = plainPage(await readFile(join(modulesDir, file), "utf8"))
    const specifier = module === "index" ? name : `${name}/${module}`
    const heading = `# \`${specifier}\``
    await writeFile(join(api, `${module}.md`), page.replace(/^# .*$/m, heading))
    entries.push({ module, specifier, summary: overview(page) })
  }
  await Promise.all(["modules", "examples", "index.md", "_config.yml"].map((f) => rm(join(docs, f), { recursive: true, force: true })))
  const lines = [
    `# ${name}: API reference`,
    "",
    `<!-- Generated by \`pnpm docs:api\` from the JSDoc in src/; do not edit. -->`,
    `<!-- api-inputs: ${await inputsHash(pkgDir)} -->`,
    "",
    "One page per module (each is an entry point of the package's `exports`):",
    "",
    ...entries.map((e) => `- [\`${e.specifier}\`](${e.module}.md)${e.summary === "" ? "" : `: ${e.summary}`}`),
    ""
  ]
  await writeFile(join(api, "README.md"), lines.join("\n"))
  process.stdout.write(`docs:api: ${dir}: ${entries.length} modules (${((Date.now() - started) / 1000).toFixed(0)} s)\n`)
}

const main = async () => {
  const args = process.argv.slice(2)
  if (args.includes("--check")) {
    const problems = await stale()
    if (problems.length > 0) {
      process.stderr.write(`The API reference is out of date; run \`pnpm docs:api\`:\n${problems.join("\n")}\n`)
      process.exit(1)
    }
    return
  }
  const only = args.filter((a) => !a.startsWith("--"))
  const packages = (await referencePackages()).filter((p) => only.length === 0 || only.includes(p.dir))
  // Two at a time: docgen is mostly one core's work (parsing, tsc on the examples).
  const queue = [...packages]
  const failures = []
  await Promise.all([0, 1].map(async () => {
    for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
      await generate(p).catch((error) => failures.push(`${p.dir}: ${error.message}`))
    }
  }))
  if (failures.length > 0) {
    process.stderr.write(`${failures.join("\n\n")}\n`)
    process.exit(1)
  }
}

if (process.argv[1] === self) await main()
