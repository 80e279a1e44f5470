// Bundles the built command (dist/bin.js and what it imports) into
// dist/bundle/ (bin.js and the chunks of its dynamic imports), which
// bin/switchboard.js runs: Node then reads and links a few files instead of
// hundreds of modules (effect, our packages), which was most of the CLI's
// start-up (docs/cli.md, "Start-up").
//
// `worker` and `--database` runs use dist/bin.js (see bin/switchboard.js);
// @effect/sql-pg 4 speaks Postgres itself and sqlite is Node's own
// node:sqlite, so no driver is left out. undici is loaded at run time by @switchboard/node
// through `createRequire`, which esbuild cannot follow, so it stays external
// (it is a dependency of this package for that reason).
import { build } from "esbuild"
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import process from "node:process"
import { dirname, join } from "node:path"
import { fileURLToPath, URL } from "node:url"
import { buildPage } from "./page.mjs"

const packageDir = fileURLToPath(new URL("../", import.meta.url))
const dist = `${packageDir}dist/`

// `pnpm build` (and so `pnpm demo`) runs this every time: when no source of
// the last bundle (its metafile's inputs) is newer than the bundle, keep it.
const fresh = (meta, extra = []) => {
  if (!existsSync(meta)) return false
  const built = statSync(meta).mtimeMs
  const inputs = Object.keys(JSON.parse(readFileSync(meta, "utf8")).inputs)
  const sources = [fileURLToPath(import.meta.url), ...extra, ...inputs.map((input) => `${packageDir}${input}`)]
  return sources.every((source) => (statSync(source, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) <= built)
}

// The chat page of `switchboard serve` (scripts/page.mjs) into dist/page.
// Its metafile stays out of the published files.
const pageMeta = `${dist}page/meta.json`
if (!fresh(pageMeta, [`${packageDir}page/index.html`, `${packageDir}scripts/page.mjs`])) {
  rmSync(`${dist}page`, { recursive: true, force: true })
  writeFileSync(pageMeta, JSON.stringify(await buildPage(`${dist}page`)))
}

const meta = `${dist}bundle/meta.json`
if (fresh(meta)) process.exit(0)

// Chunk names carry a hash: remove the previous build's.
rmSync(`${dist}bundle`, { recursive: true, force: true })

// Our packages' Node entry (dist/entry.js, "node" in their exports) checks
// the installed effect, then imports dist/index.js at its top level: in the
// bundle that check is moot (effect is inside it) and each entry would be a
// chunk of its own. Take dist/index.js instead.
const ownIndex = {
  name: "switchboard-index",
  setup(build) {
    build.onResolve({ filter: /^@switchboard\/[a-z-]+$/ }, async (args) => {
      const manifest = await build.resolve(`${args.path}/package.json`, { kind: args.kind, resolveDir: args.resolveDir })
      if (manifest.errors.length > 0) return { errors: manifest.errors }
      return { path: join(dirname(manifest.path), "dist", "index.js") }
    })
  }
}

const result = await build({
  absWorkingDir: packageDir,
  entryPoints: [`${dist}bin.js`],
  outdir: `${dist}bundle`,
  // Dynamic imports (the emulator, the demo, the workflows) stay separate chunks, loaded when used.
  splitting: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  external: ["undici"],
  // CommonJS dependencies bundled into ESM still call `require` for Node's own modules.
  banner: { js: "import { createRequire as __switchboardRequire } from \"node:module\"; const require = __switchboardRequire(import.meta.url);" },
  legalComments: "none",
  // Which sources each chunk holds: test/bin.test.ts checks what a command loads.
  metafile: true,
  // Less for V8 to parse at every start; names are kept for readable stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
  plugins: [ownIndex]
})
writeFileSync(meta, JSON.stringify(result.metafile))
