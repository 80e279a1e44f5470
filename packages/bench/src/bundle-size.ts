/**
 * Bundle size of a minimal page: one chat call and one streamed chat,
 * rendered into the document. The same page is written three times
 * (`packages/bench/bundle/`): with `@switchboard/browser`, with the `openai`
 * client, and with `ai` + `@ai-sdk/openai-compatible` (ours also imported
 * from the package indexes, which esbuild keeps whole). Each is bundled with
 * esbuild (minified, ESM, browser platform) and measured minified and
 * gzipped (zlib, level 9); for ours, esbuild's metafile says which packages
 * and modules weigh what. Our four pages are also bundled by Vite's
 * production build (Rollup, minified by esbuild), which shakes the indexes.
 *
 * Run: `pnpm build && node packages/bench/dist/bundle-size.js` (`--json` for
 * JSON). esbuild and the comparison clients are devDependencies of
 * `packages/browser` and are resolved from there; Vite is the repository's
 * own (vitest's), resolved from the root.
 */
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Zlib from "node:zlib"

/** The part of esbuild's API used here (esbuild is not a dependency of this package). */
interface Metafile {
  readonly outputs: Record<string, { readonly bytes: number; readonly inputs: Record<string, { readonly bytesInOutput: number }> }>
}
interface PluginBuild {
  readonly onResolve: (
    options: { readonly filter: RegExp },
    callback: (args: { readonly path: string }) => { readonly path: string }
  ) => void
}
interface Esbuild {
  readonly build: (options: Record<string, unknown>) => Promise<{
    readonly outputFiles: ReadonlyArray<{ readonly contents: Uint8Array }>
    readonly metafile: Metafile
  }>
}

/** The part of Vite's API used here: `build` with `write: false` gives Rollup's output. */
interface ViteChunk {
  readonly type: "chunk"
  readonly code: string
  readonly modules: Record<string, { readonly renderedLength: number }>
}
interface Vite {
  readonly build: (config: Record<string, unknown>) => Promise<unknown>
}

const bench = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const root = Path.resolve(bench, "..", "..")
const browserPackage = Path.resolve(bench, "..", "browser")
const entries = Path.join(bench, "bundle")
const fromBrowser = createRequire(Path.join(browserPackage, "package.json"))
const fromRoot = createRequire(Path.join(root, "package.json"))

/**
 * @since 0.1.0
 */
export interface Entry {
  readonly name: string
  readonly file: string
  readonly description: string
  /** esbuild unless said. */
  readonly bundler?: "esbuild" | "vite"
}

/**
 * @since 0.1.0
 */
export const entryPoints: ReadonlyArray<Entry> = [
  { name: "switchboard", file: "switchboard.ts", description: "@switchboard/browser, `BrowserSwitchboard.layerChat`" },
  {
    name: "switchboard-all",
    file: "switchboard-all.ts",
    description: "@switchboard/browser, `BrowserSwitchboard.layer` (every capability)"
  },
  {
    name: "switchboard-index",
    file: "switchboard-index.ts",
    description: "the same, imported from the package indexes (`import { Chat } from \"@switchboard/core\"`), `layerChat`"
  },
  {
    name: "switchboard-index-all",
    file: "switchboard-index-all.ts",
    description: "the same, imported from the package indexes, `layer` (every capability)"
  },
  {
    name: "switchboard-vite",
    file: "switchboard.ts",
    bundler: "vite",
    description: "Vite (Rollup): @switchboard/browser, `BrowserSwitchboard.layerChat`"
  },
  {
    name: "switchboard-index-vite",
    file: "switchboard-index.ts",
    bundler: "vite",
    description: "Vite (Rollup): the same, imported from the package indexes"
  },
  {
    name: "switchboard-all-vite",
    file: "switchboard-all.ts",
    bundler: "vite",
    description: "Vite (Rollup): @switchboard/browser, `BrowserSwitchboard.layer` (every capability)"
  },
  {
    name: "switchboard-index-all-vite",
    file: "switchboard-index-all.ts",
    bundler: "vite",
    description: "Vite (Rollup): the same, imported from the package indexes"
  },
  { name: "openai", file: "openai.ts", description: "openai" },
  { name: "ai-sdk", file: "ai-sdk.ts", description: "ai + @ai-sdk/openai-compatible" },
  { name: "effect-floor", file: "effect-floor.ts", description: "(floor) effect alone: runtime + Stream + Schema, no request" }
]

/** The package whose version each entry reports. */
const versionPackage: Record<string, string> = { openai: "openai", "ai-sdk": "ai", "effect-floor": "effect" }

/**
 * @since 0.1.0
 */
export interface Part {
  readonly name: string
  readonly bytes: number
}

/**
 * @since 0.1.0
 */
export interface Measured {
  readonly name: string
  readonly description: string
  readonly version: string
  readonly minifiedBytes: number
  readonly gzipBytes: number
  readonly brotliBytes: number
  /** Minified bytes per package, heaviest first (Vite entries: Rollup's rendered bytes, before minifying). */
  readonly packages: ReadonlyArray<Part>
  /** Minified bytes per module, heaviest first (the first 15). */
  readonly modules: ReadonlyArray<Part>
}

/** The Effect 4 edition's targets, gzip: chat alone (`switchboard`) and every capability (`switchboard-all`). */
export const targetGzipBytes: Readonly<Record<string, number>> = { switchboard: 45 * 1024, "switchboard-all": 55 * 1024 }

/** esbuild, from the browser package (whose tests bundle a page with it). */
export const loadEsbuild = async (): Promise<Esbuild> => {
  const module = (await import(pathToFileURL(fromBrowser.resolve("esbuild")).href)) as Esbuild & { default?: Esbuild }
  return module.default ?? module
}

const versionOf = (name: string): string => {
  if (name.startsWith("switchboard")) return (fromBrowser("./package.json") as { version: string }).version
  const pkg = versionPackage[name] ?? name
  let dir = Path.dirname(fromBrowser.resolve(pkg))
  // Walk up from the resolved entry to the package's own package.json.
  while (Path.basename(dir) !== pkg && dir !== Path.dirname(dir)) dir = Path.dirname(dir)
  return (createRequire(Path.join(dir, "package.json"))("./package.json") as { version: string }).version
}

/**
 * `node_modules/.pnpm/effect@3.22.4/node_modules/effect/dist/esm/Schema.js` →
 * `effect`; `packages/core/src/Chat.ts` → `@switchboard/core`; an entry file → `(entry)`.
 */
const packageOf = (input: string): string => {
  const modules = input.lastIndexOf("node_modules/")
  if (modules >= 0) {
    const rest = input.slice(modules + "node_modules/".length).split("/")
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  if (input.startsWith("packages/bench/bundle/")) return "(entry)"
  const workspace = /^packages\/([^/]+)\//.exec(input)
  return workspace ? `@switchboard/${workspace[1]}` : input
}

/** `…/node_modules/effect/dist/esm/internal/core.js` → `effect/internal/core.js`; `packages/core/src/Chat.ts` → `@switchboard/core/src/Chat.ts`. */
const moduleOf = (input: string): string => {
  const modules = input.lastIndexOf("node_modules/")
  if (modules >= 0) return input.slice(modules + "node_modules/".length).replace(/\/dist\/(esm\/)?/, "/")
  return input.replace(/^packages\/([^/]+)\//, "@switchboard/$1/")
}

const heaviest = (sizes: Map<string, number>, limit = Infinity): ReadonlyArray<Part> =>
  [...sizes].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes).slice(0, limit)

const browserSpecifier = /^@switchboard\/browser(\/.*)?$/
/** `@switchboard/browser/X` → the package's source: it is not a dependency of this package. */
const browserSource = (specifier: string) =>
  Path.join(browserPackage, "src", `${specifier.slice("@switchboard/browser/".length) || "index"}.ts`)
const switchboardBrowser = {
  name: "switchboard-browser",
  setup: (build: PluginBuild) =>
    build.onResolve({ filter: browserSpecifier }, (args) => ({ path: browserSource(args.path) }))
}

/** The same for Vite (a Rollup plugin). */
const switchboardBrowserVite = {
  name: "switchboard-browser",
  enforce: "pre",
  resolveId: (specifier: string) => (browserSpecifier.test(specifier) ? browserSource(specifier) : null)
}

/** The bundle's code and its minified bytes per input (a path relative to the repository). */
interface Bundled {
  readonly code: Uint8Array
  readonly inputs: ReadonlyArray<readonly [string, number]>
}

const byEsbuild = async (entry: Entry, bundler: Esbuild): Promise<Bundled> => {
  const result = await bundler.build({
    entryPoints: [Path.join(entries, entry.file)],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    metafile: true,
    outfile: `${entry.name}.js`,
    // Workspace packages from their sources (no build needed); the comparison clients from packages/browser.
    // esbuild drops its default `module` condition when given custom ones; keep it.
    conditions: ["@switchboard/source", "module"],
    nodePaths: [Path.join(browserPackage, "node_modules")],
    plugins: [switchboardBrowser],
    // Metafile paths relative to the repository, whatever the current directory.
    absWorkingDir: root,
    logLevel: "silent"
  })
  return {
    code: result.outputFiles[0]!.contents,
    inputs: Object.values(result.metafile.outputs).flatMap((output) =>
      Object.entries(output.inputs).map(([input, { bytesInOutput }]) => [input, bytesInOutput] as const)
    )
  }
}

const isChunk = (output: unknown): output is ViteChunk =>
  typeof output === "object" && output !== null && (output as { readonly type?: unknown }).type === "chunk"

/** Vite's production build of the entry, as one chunk (Rollup shakes, esbuild minifies). */
const byVite = async (entry: Entry): Promise<Bundled> => {
  const vite = (await import(pathToFileURL(fromRoot.resolve("vite")).href)) as Vite
  const result = await vite.build({
    configFile: false,
    root,
    logLevel: "silent",
    resolve: { conditions: ["@switchboard/source", "module", "browser", "production"] },
    plugins: [switchboardBrowserVite],
    build: {
      write: false,
      target: "es2022",
      minify: "esbuild",
      modulePreload: false,
      copyPublicDir: false,
      reportCompressedSize: false,
      rollupOptions: { input: Path.join(entries, entry.file), output: { inlineDynamicImports: true } }
    }
  })
  const outputs = (Array.isArray(result) ? result : [result]) as ReadonlyArray<{ readonly output: ReadonlyArray<unknown> }>
  const chunk = outputs.flatMap((o) => o.output).find(isChunk)
  if (chunk === undefined) throw new Error(`Vite gave no chunk for ${entry.file}`)
  return {
    code: new TextEncoder().encode(chunk.code),
    inputs: Object.entries(chunk.modules).map(([id, { renderedLength }]) => [Path.relative(root, id), renderedLength] as const)
  }
}

/**
 * Bundles and measures one entry.
 *
 * @since 0.1.0
 */
export const measure = async (entry: Entry, esbuild?: Esbuild): Promise<Measured> => {
  const { code, inputs } = entry.bundler === "vite" ? await byVite(entry) : await byEsbuild(entry, esbuild ?? (await loadEsbuild()))
  const packages = new Map<string, number>()
  const modules = new Map<string, number>()
  for (const [input, bytes] of inputs) {
    packages.set(packageOf(input), (packages.get(packageOf(input)) ?? 0) + bytes)
    modules.set(moduleOf(input), (modules.get(moduleOf(input)) ?? 0) + bytes)
  }
  return {
    name: entry.name,
    description: entry.description,
    version: versionOf(entry.name),
    minifiedBytes: code.byteLength,
    gzipBytes: Zlib.gzipSync(code, { level: 9 }).byteLength,
    brotliBytes: Zlib.brotliCompressSync(code).byteLength,
    packages: heaviest(packages),
    modules: heaviest(modules, 15)
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`

/**
 * The report as Markdown tables.
 *
 * @since 0.1.0
 */
export const format = (all: ReadonlyArray<Measured>): string => {
  const lines = [
    "| entry (one chat call + one streamed chat) | version | minified | gzip | brotli |",
    "|---|---|---:|---:|---:|",
    ...all.map((m) => `| ${m.description} | ${m.version} | ${kb(m.minifiedBytes)} | ${kb(m.gzipBytes)} | ${kb(m.brotliBytes)} |`)
  ]
  for (const m of all) {
    const target = targetGzipBytes[m.name]
    if (target !== undefined) lines.push("", `${m.name}: ${kb(m.gzipBytes)} gzip, target ${kb(target)}: ${m.gzipBytes <= target ? "met" : "NOT met"}`)
  }
  const ours = all.find((m) => m.name === "switchboard")
  if (ours) {
    lines.push(
      "",
      "| package (switchboard entry) | minified bytes in the bundle | share |",
      "|---|---:|---:|",
      ...ours.packages.map((p) => `| ${p.name} | ${kb(p.bytes)} | ${((100 * p.bytes) / ours.minifiedBytes).toFixed(0)}% |`),
      "",
      "| heaviest modules (switchboard entry) | minified bytes |",
      "|---|---:|",
      ...ours.modules.map((p) => `| ${p.name} | ${kb(p.bytes)} |`)
    )
  }
  return lines.join("\n")
}

/**
 * Measures every entry and prints the report (JSON with `--json`).
 *
 * @since 0.1.0
 */
export const main = async (argv: ReadonlyArray<string> = process.argv.slice(2)): Promise<ReadonlyArray<Measured>> => {
  const esbuild = await loadEsbuild()
  const all: Array<Measured> = []
  for (const entry of entryPoints) all.push(await measure(entry, esbuild))
  console.log(argv.includes("--json") ? JSON.stringify(all, null, 2) : format(all))
  return all
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(Path.resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
