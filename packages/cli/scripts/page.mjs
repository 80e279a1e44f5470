// Bundles the chat page of `switchboard serve` (page/main.tsx) for the
// browser: React, `@ai-sdk/react` and `ai` in one file, served by the command
// itself (no CDN). Used by bundle.mjs (into dist/page) and by the browser
// test (into a temporary directory).
import { build } from "esbuild"
import { copyFileSync, mkdirSync } from "node:fs"
import { fileURLToPath, URL } from "node:url"

export const packageDir = fileURLToPath(new URL("../", import.meta.url))

/** Writes page.js and index.html into `outdir`; returns esbuild's metafile. */
export const buildPage = async (outdir, options = {}) => {
  mkdirSync(outdir, { recursive: true })
  const result = await build({
    absWorkingDir: packageDir,
    entryPoints: ["page/main.tsx"],
    outfile: `${outdir}/page.js`,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": "\"production\"" },
    minify: true,
    legalComments: "none",
    metafile: true,
    logLevel: "warning",
    ...options
  })
  copyFileSync(`${packageDir}page/index.html`, `${outdir}/index.html`)
  return result.metafile
}
