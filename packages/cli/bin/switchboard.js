#!/usr/bin/env node
// The command is dist/bundle/bin.js: dist/bin.js bundled (one main file, and
// chunks loaded when a command needs them) so that it starts in half the
// time (packages/cli/scripts/bundle.mjs, docs/cli.md "Start-up").
// Runs over durable workflows (`worker`, `--database`) use dist/bin.js: on
// Effect 3 their database drivers could not be bundled; on Effect 4 nothing
// forces it, and a long-lived worker gains nothing from a faster start. Both
// are the same program, so a misrouted run (a prompt that says "worker") is
// only slower.
// This launcher exists before the build so that pnpm can link the bin on a
// fresh clone.
import { existsSync, mkdirSync, statSync } from "node:fs"
import module from "node:module"
import { homedir } from "node:os"
import { join } from "node:path"
import process from "node:process"
import { URL } from "node:url"
import v8 from "node:v8"

// undici parses HTTP with a WebAssembly module; by default V8 recompiles it
// in the background with its optimising tier, and Node waits for that before
// it exits: about 80 ms added to every command (measured: docs/cli.md,
// "Start-up"). The baseline tier parses a terminal's worth of HTTP as fast.
v8.setFlagsFromString("--liftoff-only")

// V8's compiled code of the bundle, kept on disk between runs (Node's
// compile cache): a command after the first parses and compiles less
// (measured: docs/cli.md, "Start-up"). Node's default place is the shared
// temporary directory, where another user could plant code that V8 would
// load, so the cache lives in this user's own cache directory, made 0700,
// and is used only when this user owns it and no one else can write it.
// `NODE_DISABLE_COMPILE_CACHE=1` turns it off; `NODE_COMPILE_CACHE` moves it
// (Node itself then enables it, where the user said, before this runs).
// An application's switch, so the CLI's and not the libraries'.
const privateCacheDir = () => {
  const root = process.env.XDG_CACHE_HOME || join(homedir(), ".cache")
  const dir = join(root, "switchboard", "compile-cache")
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const stat = statSync(dir)
    const mine = typeof process.getuid !== "function" || stat.uid === process.getuid()
    return mine && (stat.mode & 0o022) === 0 ? dir : undefined
  } catch {
    return undefined
  }
}
if (!process.env.NODE_DISABLE_COMPILE_CACHE && !process.env.NODE_COMPILE_CACHE) {
  const dir = privateCacheDir()
  if (dir !== undefined) module.enableCompileCache(dir)
}

const args = process.argv.slice(2)
const needsDrivers = args.includes("worker") || args.some((arg) => arg === "--database" || arg.startsWith("--database="))
const bin = new URL(needsDrivers ? "../dist/bin.js" : "../dist/bundle/bin.js", import.meta.url)
if (!existsSync(bin)) {
  process.stderr.write("switchboard: not built yet; run `pnpm build` in the repository first\n")
  process.exit(2)
}
await import(bin.href)
