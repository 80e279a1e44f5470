#!/usr/bin/env node
// The command is dist/bin.js; this launcher exists before the build so that
// pnpm can link the bin on a fresh clone.
import { existsSync } from "node:fs"
import process from "node:process"
import { URL } from "node:url"

const bin = new URL("../dist/bin.js", import.meta.url)
if (!existsSync(bin)) {
  process.stderr.write("switchboard: not built yet; run `pnpm build` in the repository first\n")
  process.exit(2)
}
await import(bin.href)
