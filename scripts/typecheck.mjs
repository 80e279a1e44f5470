#!/usr/bin/env node
/**
 * `pnpm typecheck`: one `tsc` per set of compiler options, both at once, each
 * to its end (every error shown), failing if either fails. Each program holds
 * every package's files that share its options (tsconfig.check-node.json;
 * tsconfig.check-dom.json: the browser's `lib`), so a module is checked once
 * per set of options instead of once per package that imports it
 * (docs/decisions.md, "The test suite's wall time").
 */
import { spawn } from "node:child_process"
import process from "node:process"
import { fileURLToPath, URL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url))
const check = (config) =>
  new Promise((resolve) => {
    spawn(process.execPath, [tsc, "-p", config], { cwd: root, stdio: "inherit" }).on("close", (code) => resolve(code ?? 1))
  })
const codes = await Promise.all(["tsconfig.check-node.json", "tsconfig.check-dom.json"].map(check))
process.exitCode = Math.max(...codes)
