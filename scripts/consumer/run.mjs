#!/usr/bin/env node
/**
 * The consumer test (docs/packaging.md): builds and packs every publishable
 * workspace package, then installs the tarballs as an application would, in
 * new directories outside the workspace, and checks that
 *   1. with npm and plain `effect` (Effect 4.1), program.ts runs against the
 *      packed emulator and `npm ls effect` shows one copy; kit.ts tests a
 *      two-tool agent with @switchboard/testing, nothing listening, and a
 *      script that disagrees fails with the kit's typed error;
 *   2. the same holds with pnpm;
 *   3. tsc type-checks program.ts with moduleResolution node16, nodenext and
 *      bundler, skipLibCheck false;
 *   4. an application on Effect 3: npm refuses the install naming the peer,
 *      pnpm warns of the unmet peer and the program stops with one sentence;
 *   5. each tarball holds LICENSE, README.md and dist/, no .tsbuildinfo, no
 *      tests, and no `workspace:` range;
 *   6. every install line of the docs runs as written (install-lines.mjs).
 * Installs prefer the local caches (offline once they hold the packages).
 * Every directory it makes is removed and every process it starts is stopped,
 * whatever happens. Usage: node scripts/consumer/run.mjs [--keep] [--offline]
 */
import { execFile, spawn } from "node:child_process"
import { cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import process from "node:process"
import { fileURLToPath, URL } from "node:url"
import { runInstallLines } from "./install-lines.mjs"

const root = fileURLToPath(new URL("../..", import.meta.url))
const here = fileURLToPath(new URL(".", import.meta.url))
const keep = process.argv.includes("--keep")
const started = Date.now()
const children = new Set()
let work

const log = (line) => process.stdout.write(`consumer: ${line} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`)

class CheckFailed extends Error {}
const check = (condition, message) => {
  if (!condition) throw new CheckFailed(message)
}

/** Runs a command to its end; rejects with its output unless `allowFailure`. */
const run = (command, args, { cwd = root, env, allowFailure = false } = {}) =>
  new Promise((resolve, reject) => {
    const child = execFile(command, args, {
      cwd,
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024
    }, (error, stdout, stderr) => {
      children.delete(child)
      const result = { code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }
      if (error && !allowFailure) {
        reject(new CheckFailed(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout}\n${stderr}`))
      } else resolve(result)
    })
    children.add(child)
  })

// A bin runs through shims (pnpm's `.bin` scripts, and the workspace's `node`,
// which starts the real binary as a child rather than replacing itself), so a
// signal to the child alone would leave the server running, holding our pipes
// open: a started server gets a process group of its own, signalled whole.
const groups = new WeakSet()
const stop = (child) => {
  try {
    process.kill(groups.has(child) ? -child.pid : child.pid, "SIGTERM")
  } catch {
    // already gone
  }
}
const stopAll = () => {
  for (const child of children) stop(child)
  children.clear()
}

/** Starts an emulator from a packed bin and resolves with its base URL. */
const startEmulator = (cwd, bin, args) =>
  new Promise((resolve, reject) => {
    const child = spawn(join(cwd, "node_modules", ".bin", bin), args, { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true })
    groups.add(child)
    children.add(child)
    let output = ""
    const onData = (data) => {
      output += data
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(output)
      if (match) resolve({ url: match[1], stop: () => (stop(child), children.delete(child)) })
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => reject(new CheckFailed(`${bin} exited with ${code} before listening:\n${output}`)))
  })

// --- the packages --------------------------------------------------------

/** The one Effect range every package names as its peer: the minor is pinned (docs/packaging.md). */
const effectRange = ">=4.1.0 <4.2.0"

const publishable = async () => {
  const { stdout } = await run("pnpm", ["-r", "ls", "--depth", "-1", "--json"])
  return JSON.parse(stdout).filter((p) => !p.private && p.path !== root.replace(/\/$/, ""))
}

const pack = async (pkg, destination) => {
  const { stdout } = await run("pnpm", ["pack", "--pack-destination", destination], { cwd: pkg.path })
  const tarball = stdout.trim().split("\n").pop().trim()
  check(tarball.endsWith(".tgz"), `pnpm pack printed no tarball for ${pkg.name}: ${stdout}`)
  return { ...pkg, tarball }
}

// 5. What a tarball holds.
const checkTarball = async ({ name, version, tarball }) => {
  const files = (await run("tar", ["tzf", tarball])).stdout.trim().split("\n").map((f) => f.replace(/^package\//, ""))
  for (const required of ["LICENSE", "README.md", "package.json", "dist/index.js", "dist/index.d.ts"]) {
    check(files.includes(required), `${name}: the tarball has no ${required}`)
  }
  const unwanted = files.filter((f) => /\.tsbuildinfo$|(^|\/)test\/|\.test\.[cm]?[jt]s(\.map)?$/.test(f))
  check(unwanted.length === 0, `${name}: the tarball ships ${unwanted.join(", ")}`)
  const manifest = JSON.parse((await run("tar", ["xzf", tarball, "-O", "package/package.json"])).stdout)
  const ranges = { ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.optionalDependencies }
  const workspaceRanges = Object.entries(ranges).filter(([, range]) => range.startsWith("workspace:"))
  check(workspaceRanges.length === 0, `${name}: published with ${workspaceRanges.map((e) => e.join("@")).join(", ")}`)
  for (const dep of Object.keys(manifest.dependencies ?? {})) {
    check(dep !== "effect" && !dep.startsWith("@effect/"), `${name}: ${dep} is a dependency, not a peer dependency`)
  }
  check(manifest.peerDependencies?.effect === effectRange, `${name}: effect is not a peer at ${effectRange}`)
  check(manifest.version === version, `${name}: packed version ${manifest.version}, expected ${version}`)
}

// --- a consumer ----------------------------------------------------------

/**
 * A new application directory that depends on every tarball, `effect`, and
 * the peers the READMEs' examples import (as `@effect/ai`), as their install
 * lines say; npm and pnpm install the other peers by themselves.
 */
const consumer = async (dir, packages, effect) => {
  await mkdir(dir, { recursive: true })
  const tarballs = Object.fromEntries(packages.map((p) => [p.name, `file:${p.tarball}`]))
  await writeFile(join(dir, "package.json"), JSON.stringify({
    name: "switchboard-consumer",
    private: true,
    type: "module",
    dependencies: { ...await readmePeers(packages), ...tarballs, effect },
    devDependencies: { "@types/node": "^22.0.0" },
    // A tarball's own @switchboard/* dependencies come from the tarballs too.
    overrides: Object.fromEntries(packages.map((p) => [p.name, `$${p.name}`])),
    pnpm: { overrides: tarballs }
  }, null, 2))
  return dir
}

// --offline proves that the caches suffice: installs then fail rather than reach the registry.
const cache = process.argv.includes("--offline") ? "--offline" : "--prefer-offline"
const npmInstall = (dir) => run("npm", ["install", cache, "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir })
const pnpmInstall = (dir) => run("pnpm", ["install", cache, "--config.strict-peer-dependencies=false"], { cwd: dir })

/** Every installed Switchboard package must resolve the application's own copy of effect. */
const checkOneEffect = async (dir, packages) => {
  const own = await realpath(createRequire(join(dir, "package.json")).resolve("effect/package.json"))
  for (const { name } of packages) {
    const pkgDir = await realpath(join(dir, "node_modules", name))
    const theirs = await realpath(createRequire(join(pkgDir, "package.json")).resolve("effect/package.json"))
    check(theirs === own, `${name} loads effect from ${dirname(theirs)}, the application from ${dirname(own)}`)
  }
  const version = JSON.parse(await readFile(own, "utf8")).version
  check(version.startsWith("4."), `the application got effect ${version}`)
  return version
}

/** Runs the compiled program against an emulator and checks what it prints. */
const runProgram = async (dir, url) => {
  const env = { SWITCHBOARD_BASE_URL: url, SWITCHBOARD_API_KEY: "sk-emulator" }
  const { stdout } = await run("node", ["program.js"], { cwd: dir, env })
  const results = JSON.parse(stdout.trim().split("\n").pop())
  check(results.chat.length > 0, "chat: empty reply")
  check(results.stream.length > 0, "stream: no text")
  check(results.embeddings.length === 2 && results.embeddings.every((n) => n > 0), "embeddings: not two vectors")
  check(/^https?:\/\//.test(results.video), `video: no URL (${results.video})`)
  check(results.agent.toolCalls.includes("add:success") && results.agent.text.length > 0, "agent: no tool call or no answer")
  check(results.ai.length > 0, "ai: generateText gave no text")
  check(results.browser.length > 0, "browser: the fetch wire gave no reply")
  check(/^https?:\/\//.test(results.workflow), `workflow: no URL (${results.workflow})`)
  return results
}

/** The testing kit from the tarballs: a scripted agent run offline, and a disagreeing script failing clearly. */
const runKit = async (dir) => {
  const { stdout } = await run("node", ["kit.js"], { cwd: dir, env: {} })
  const results = JSON.parse(stdout.trim().split("\n").pop())
  check(results.passed === "It is 10.", `kit: the scripted agent run gave ${JSON.stringify(results.passed)}`)
  check(
    results.failed.tag === "StepMismatchError" && /calls tool "multiply", which the request does not offer \(it offers add, double\)/.test(results.failed.message),
    `kit: the disagreeing script failed unclearly: ${JSON.stringify(results.failed)}`
  )
  return results
}

/** A first program as README.md and docs/getting-started.md write it. */
const readmeProgram = `
import { Chat } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import { Effect } from "effect"

const program = Effect.gen(function*() {
  const completion = yield* Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello!" }] })
  console.log(completion.choices[0]?.message.content)
})
program.pipe(Effect.provide(NodeSwitchboard.layerConfig()), Effect.runPromise)
`

const tsconfig = (module, moduleResolution, readmes) => ({
  compilerOptions: {
    target: "ES2022",
    // DOM: @effect/platform's own types name the DOM's Storage (KeyValueStore.layerStorage).
    lib: ["ES2022", "DOM"],
    module,
    moduleResolution,
    types: ["node"],
    strict: true,
    skipLibCheck: false,
    ...(moduleResolution === "NodeNext" ? { outDir: "." } : { noEmit: true })
  },
  files: ["program.ts", "kit.ts", ...readmes]
})

/** The ```ts example of a package's README, if it has one. */
const readmeExample = async (path) => /```ts\n([\s\S]*?)```/.exec(await readFile(join(path, "README.md"), "utf8"))?.[1]

/** Each README example as a file of its own (type-checked, not run). */
const readmeExamples = async (dir, packages) => {
  const files = []
  for (const { name, path } of packages) {
    const example = await readmeExample(path)
    if (example === undefined) continue
    const file = `readme-${name.split("/").pop()}.ts`
    await writeFile(join(dir, file), `${example}export {}\n`)
    files.push(file)
  }
  return files
}

/** The peer dependencies (but effect) that README examples import, with their packages' ranges. */
const readmePeers = async (packages) => {
  const peers = {}
  for (const { path } of packages) {
    const example = (await readmeExample(path)) ?? ""
    for (const [, name] of example.matchAll(/from "((?:@[^/"]+\/)?[^/"]+)/g)) {
      const range = (await Promise.all(packages.map(async (p) =>
        JSON.parse(await readFile(join(p.path, "package.json"), "utf8")).peerDependencies?.[name]
      ))).find((r) => r !== undefined)
      if (name !== "effect" && range !== undefined) peers[name] = range
    }
  }
  return peers
}

// 4. An application on Effect 3: npm refuses the install, naming the peer; pnpm
// warns of the unmet peer, and the program then stops with the package's one
// sentence (dist/entry.js, scripts/effect-entry.mjs) instead of a link error.
const checkEffect3 = async (packages) => {
  const npmDir = await consumer(join(work, "npm-effect-3"), packages, "^3.22.0")
  const refused = await run("npm", ["install", cache, "--no-audit", "--no-fund"], { cwd: npmDir, allowFailure: true })
  check(
    refused.code !== 0 && (refused.stdout + refused.stderr).includes(`peer effect@"${effectRange}"`),
    `npm installed the packages beside Effect 3, or refused without naming the peer:\n${refused.stdout}${refused.stderr}`
  )
  const pnpmDir = await consumer(join(work, "pnpm-effect-3"), packages, "^3.22.0")
  const { stdout } = await pnpmInstall(pnpmDir)
  check(
    stdout.includes(`unmet peer effect@"${effectRange}": found 3.`),
    `pnpm installed Effect 3 without an unmet-peer warning:\n${stdout}`
  )
  const wrong = await run("node", ["--input-type=module", "-e", readmeProgram], { cwd: pnpmDir, allowFailure: true })
  check(wrong.code !== 0, "the README's program on Effect 3 succeeded")
  check(
    /needs effect 4\.1 but found effect 3\.[^\n]*@effect3/.test(wrong.stderr) && !wrong.stderr.includes("ERR_PACKAGE_PATH_NOT_EXPORTED"),
    `the README's program on Effect 3 failed without the sentence:\n${wrong.stderr}`
  )
  log("4. Effect 3: npm refuses the install naming the peer; pnpm warns, and the program stops with the sentence")
}

// 3. tsc with each resolution; nodenext also emits the program that runs.
const typecheck = async (dir, packages) => {
  const tsc = createRequire(join(root, "package.json")).resolve("typescript/bin/tsc")
  const configs = { node16: ["Node16", "Node16"], nodenext: ["NodeNext", "NodeNext"], bundler: ["ESNext", "Bundler"] }
  await cp(join(here, "program.ts"), join(dir, "program.ts"))
  await cp(join(here, "kit.ts"), join(dir, "kit.ts"))
  const readmes = await readmeExamples(dir, packages)
  await Promise.all(Object.entries(configs).map(async ([name, [module, resolution]]) => {
    await writeFile(join(dir, `tsconfig.${name}.json`), JSON.stringify(tsconfig(module, resolution, readmes), null, 2))
    const { code, stdout, stderr } = await run("node", [tsc, "-p", `tsconfig.${name}.json`], { cwd: dir, allowFailure: true })
    check(code === 0, `tsc (moduleResolution ${name}) failed:\n${stdout}${stderr}`)
  }))
}

// --- the checks ----------------------------------------------------------

const main = async () => {
  work = await realpath(await mkdtemp(join(tmpdir(), "switchboard-consumer-")))
  const packages = await publishable()
  log(`publishable: ${packages.map((p) => p.name).join(", ")}`)
  check(packages.some((p) => p.name === "@switchboard/emulator"), "no @switchboard/emulator to run against")

  await run("pnpm", ["-s", "build"])
  log("built")
  const tarballDir = join(work, "tarballs")
  const packed = await Promise.all(packages.map((p) => pack(p, tarballDir)))
  await Promise.all(packed.map(checkTarball))
  log("5. every tarball: LICENSE, README.md, dist/, no .tsbuildinfo or tests, no workspace: ranges, effect a peer")

  // What `pnpm add effect` / `npm install effect` write: a caret on the latest version.
  const plainEffect = `^${(await run("npm", ["view", cache, "effect@latest", "version"])).stdout.trim()}`

  // 2 and 3: pnpm with plain `effect`, the type checks, and the program the nodenext check emits.
  const pnpmDir = await consumer(join(work, "pnpm"), packed, plainEffect)
  await pnpmInstall(pnpmDir)
  await typecheck(pnpmDir, packed)
  log("3. program.ts and the packages' README examples type-check with moduleResolution node16, nodenext and bundler, skipLibCheck false")
  const cliEmulator = await startEmulator(pnpmDir, "switchboard", ["emulator", "--port", "0"])
  try {
    const results = await runProgram(pnpmDir, cliEmulator.url)
    const version = await checkOneEffect(pnpmDir, packed)
    log(`2. pnpm: the program ran against the packed CLI's emulator, one effect ${version}: ${JSON.stringify(results)}`)
    const kit = await runKit(pnpmDir)
    log(`2. pnpm: @switchboard/testing ran a two-tool agent with nothing listening, and a disagreeing script failed: ${kit.failed.message}`)
  } finally {
    cliEmulator.stop()
  }

  // 1: npm with plain `effect`.
  const npmDir = await consumer(join(work, "npm"), packed, plainEffect)
  await npmInstall(npmDir)
  await cp(join(pnpmDir, "program.js"), join(npmDir, "program.js"))
  const emulator = await startEmulator(npmDir, "switchboard-emulator", ["--port", "0"])
  try {
    await runProgram(npmDir, emulator.url)
    await cp(join(pnpmDir, "kit.js"), join(npmDir, "kit.js"))
    await runKit(npmDir)
    const { stdout } = await run("npm", ["ls", "effect", "--all", "--parseable"], { cwd: npmDir })
    const copies = new Set(stdout.trim().split("\n"))
    check(copies.size === 1, `npm ls effect shows ${copies.size} copies:\n${stdout}`)
    const version = await checkOneEffect(npmDir, packed)
    log(`1. npm: the program ran against the packed emulator; npm ls effect shows one copy, ${version}`)
  } finally {
    emulator.stop()
  }

  await checkEffect3(packed)

  // 6: every install line of the docs, as written (install-lines.mjs).
  const lines = await runInstallLines({ root, work, packed, run, cache, log })
  log(`6. the docs' install lines: ${lines.ran} distinct lines ran; ${lines.skipped.length} marked not run`)
  log(`passed: ${packed.length} packages, 6 checks`)
}

const cleanup = async () => {
  stopAll()
  if (work && !keep) await rm(work, { recursive: true, force: true })
  else if (work) log(`kept ${work}`)
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => void cleanup().finally(() => process.exit(130)))
}

try {
  await main()
  await cleanup()
} catch (error) {
  await cleanup()
  process.stderr.write(`consumer test FAILED: ${error instanceof CheckFailed ? error.message : error.stack}\n`)
  process.exit(1)
}
