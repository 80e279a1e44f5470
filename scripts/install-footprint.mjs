#!/usr/bin/env node
/**
 * Install footprint (docs/performance.md): packs @switchboard/core and
 * @switchboard/node from this checkout (build first: `pnpm build`), installs
 * the tarballs with `effect` as an application would (`npm install`, in a new
 * directory outside the workspace), and prints the size of its node_modules,
 * on disk (`du -sk`, what the 89 MB was) and in file bytes, with the
 * heaviest packages. Deterministic for a given lockfile of the registry: not
 * affected by the machine's load. The directory is removed afterwards.
 *
 * Usage: node scripts/install-footprint.mjs [--keep]
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import process from "node:process"
import { fileURLToPath, URL } from "node:url"
import { promisify } from "node:util"

const run = promisify(execFile)
const root = fileURLToPath(new URL("..", import.meta.url))
const keep = process.argv.includes("--keep")
const print = (line = "") => process.stdout.write(`${line}\n`)
const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`

/** `du` of a path: [KiB on disk, apparent bytes]. */
const du = async (path) => {
  const disk = Number((await run("du", ["-sk", path])).stdout.split("\t")[0]) * 1024
  const bytes = Number((await run("du", ["-sb", path])).stdout.split("\t")[0])
  return [disk, bytes]
}

/** Every installed package at the top of node_modules (scopes opened). */
const packagesIn = async (modules) => {
  const out = []
  for (const name of await readdir(modules)) {
    if (name.startsWith(".")) continue
    if (name.startsWith("@")) for (const inner of await readdir(join(modules, name))) out.push(`${name}/${inner}`)
    else out.push(name)
  }
  return out
}

const work = await mkdtemp(join(tmpdir(), "switchboard-footprint-"))
try {
  const tarballs = join(work, "tarballs")
  const app = join(work, "app")
  await mkdir(tarballs)
  await mkdir(app)
  const packed = []
  for (const pkg of ["core", "node"]) {
    const { stdout } = await run("pnpm", ["pack", "--pack-destination", tarballs], { cwd: join(root, "packages", pkg) })
    packed.push(stdout.trim().split("\n").pop())
  }
  await writeFile(join(app, "package.json"), JSON.stringify({ name: "footprint", version: "1.0.0", private: true }))
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packed, "effect@~4.1.0"], {
    cwd: app,
    maxBuffer: 16 * 1024 * 1024
  })
  const modules = join(app, "node_modules")
  const [disk, bytes] = await du(modules)
  const rows = []
  for (const name of await packagesIn(modules)) rows.push([name, ...(await du(join(modules, name)))])
  rows.sort((a, b) => b[1] - a[1])
  print(`npm install @switchboard/core @switchboard/node effect@~4.1.0 (packed from ${root})`)
  print()
  print("| package | on disk | file bytes |")
  print("|---|---:|---:|")
  print(`| node_modules (all ${rows.length} packages) | ${mb(disk)} | ${mb(bytes)} |`)
  for (const [name, d, b] of rows.slice(0, 10)) print(`| ${name} | ${mb(d)} | ${mb(b)} |`)
} finally {
  if (keep) print(`kept ${work}`)
  else await rm(work, { recursive: true, force: true })
}
