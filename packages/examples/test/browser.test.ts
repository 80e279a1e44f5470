/**
 * The page of docs/browser.md (src/browser.ts) in a real browser, Debian's
 * Chromium driven by playwright-core (as packages/browser/test does), behind
 * the proxy the page shows (src/server.mjs) run as its own Node process in
 * front of the emulator: the page holds no key. What the page logs is
 * compared with what the doc says it prints. docs.test.ts checks that the doc
 * shows both files as they are.
 */
import { Emulator } from "@switchboard/emulator"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as esbuild from "esbuild"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { shown, src } from "./examples.js"

const executablePath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
const runtime = ManagedRuntime.make(Emulator.layer())
let directory: string
let server: ChildProcess | undefined
let browser: Browser | undefined

/** The app the proxy serves: a page with `#answer`, the example bundled into it. */
const writeApp = async () => {
  const bundled = await esbuild.build({
    entryPoints: [Path.join(src, "browser.ts")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    conditions: ["@switchboard/source"],
    logLevel: "silent"
  })
  const script = bundled.outputFiles[0]!.text.replaceAll("</script", "<\\/script")
  Fs.writeFileSync(Path.join(directory, "index.html"), `<!doctype html>\n<p id="answer"></p>\n<script type="module">${script}</script>\n`)
}

/** Starts src/server.mjs in `directory` on a free port; resolves with the address it prints. */
const startServer = (emulator: Emulator.Emulator["Service"]) =>
  new Promise<string>((resolve, reject) => {
    server = spawn(process.execPath, [Path.join(src, "server.mjs")], {
      cwd: directory,
      env: { ...process.env, SWITCHBOARD_BASE_URL: emulator.url, SWITCHBOARD_API_KEY: emulator.apiKey, PORT: "0" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    server.once("error", reject)
    server.once("exit", (code) => reject(new Error(`server.mjs exited with ${code}`)))
    server.stdout!.setEncoding("utf8").once("data", (line: string) => resolve(line.trim()))
  })

beforeAll(async () => {
  directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-browser-example-"))
  await writeApp()
  if (!Fs.existsSync(executablePath)) {
    throw new Error(`Chromium was not found at ${executablePath}: run \`apt-get update && apt-get install -y chromium\` (or set CHROMIUM_PATH).`)
  }
  browser = await chromium.launch({ executablePath, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  if (server?.exitCode === null) {
    const exited = new Promise((resolve) => server!.once("exit", resolve))
    server.kill()
    await exited
  }
  await runtime.dispose()
  Fs.rmSync(directory, { recursive: true, force: true })
})

describe("docs/browser.md", () => {
  it("the page streams its answer through the proxy, with no key, and logs what the doc says", async () => {
    const example = shown.find((e) => e.doc === "docs/browser.md" && e.file === "browser.ts")
    expect(example?.output, "docs/browser.md shows browser.ts and what it prints").toBeDefined()
    const emulator = await runtime.runPromise(Emulator.Emulator)
    const address = await startServer(emulator)
    const page = await browser!.newPage()
    const logged: Array<string> = []
    const errors: Array<string> = []
    page.on("pageerror", (error) => errors.push(String(error)))
    // The page logs once, when its program is done.
    const done = new Promise<void>((resolve) =>
      page.on("console", (message) => {
        logged.push(message.text())
        resolve()
      })
    )
    await page.goto(address)
    await Promise.race([done, new Promise((_, reject) => page.once("pageerror", reject))])
    expect(errors).toEqual([])
    expect(`${logged.join("\n")}\n`).toBe(example!.output)
    // The emulator saw the key, which only the proxy holds.
    const requests = await runtime.runPromise(emulator.requests)
    expect(requests.map((r) => [r.path, r.authorized])).toEqual([["/v1/chat/completions", true]])
  }, 60_000)
})
