/**
 * Bundles a test program (`worker.ts`, `full-disk-worker.ts`) with esbuild
 * into one ES module Node runs as it is: the workspace's sources by their
 * `@switchboard/source` condition, Node's own modules and undici external.
 */
import * as esbuild from "esbuild"

export const bundle = (entry: string, outfile: string) =>
  esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    conditions: ["@switchboard/source"],
    // A CommonJS dependency needs `require`.
    banner: { js: "import { createRequire as bannerRequire } from 'node:module'; const require = bannerRequire(import.meta.url);" },
    logLevel: "silent"
  })
