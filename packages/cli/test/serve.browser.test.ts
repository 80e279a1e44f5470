/**
 * `switchboard serve` in a real browser: Debian's Chromium, driven by
 * playwright-core, opens the chat page (bundled here by scripts/page.mjs, as
 * `pnpm build` does), sends the starter message, sees the tools run and the
 * approval asked, approves, and sees the final answer; a stream cut by the
 * service shows an error, and so does one cut between the server and the
 * page, never a spinner.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildPage } from "../scripts/page.mjs"
import * as Serve from "../src/Serve.js"
import { starter } from "../src/ServeStarter.js"

const executablePath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
let pageDir: string
let browser: Browser | undefined
const servers: Array<Fiber.Fiber<unknown, unknown>> = []

/** Starts the command's program on a free port; resolves with its address. */
const start = (emulator?: Serve.Options["emulator"]) =>
  new Promise<string>((resolve, reject) => {
    const program = Serve.run({
      port: 0,
      model: "gpt-4o-mini",
      baseUrl: Option.none(),
      apiKey: Option.none(),
      pageDirectory: `${pageDir}/`,
      emulator: emulator ?? { stream: { interval: 20 } },
      onListening: (url) => Effect.sync(() => resolve(url))
    }).pipe(Effect.provide(NodeServices.layer), Effect.tapCause((cause) => Effect.sync(() => reject(cause))))
    servers.push(Effect.runFork(program))
  })

beforeAll(async () => {
  // The service's variables would send the page's requests to it: the test is the emulator's.
  delete process.env["SWITCHBOARD_BASE_URL"]
  delete process.env["SWITCHBOARD_API_KEY"]
  pageDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-serve-page-"))
  await buildPage(pageDir, { conditions: ["@switchboard/source"] })
  browser = await chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
  })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  for (const fiber of servers) await Effect.runPromise(Fiber.interrupt(fiber))
  if (pageDir) Fs.rmSync(pageDir, { recursive: true, force: true })
})

const open = async (url: string): Promise<Page> => {
  const page = await browser!.newPage()
  await page.goto(url)
  await page.waitForSelector("[data-action=starter]")
  return page
}

/** The page is idle: no request in flight, so no spinner. */
const idle = (page: Page) =>
  page.waitForSelector("#status[data-status=ready], #status[data-status=error]", { state: "attached" })

describe("switchboard serve in Chromium", () => {
  it("streams the tools, asks for approval, and answers once approved", async () => {
    const page = await open(await start())
    await page.click("[data-action=starter]")
    await page.waitForSelector("[data-role=user]")
    expect(await page.textContent("[data-role=user]")).toContain(starter)
    // get_weather runs at once; send_email waits for the user.
    await page.waitForSelector("[data-tool=get_weather][data-state=output-available]")
    expect(await page.textContent("[data-tool=get_weather] .output")).toContain("\"sky\":\"sunny\"")
    await page.waitForSelector("[data-tool=send_email][data-state=approval-requested]")
    await idle(page)
    await page.click("[data-tool=send_email] [data-action=approve]")
    await page.waitForSelector("[data-tool=send_email][data-state=output-available]")
    await page.waitForFunction(() => document.querySelector("[data-role=assistant] .text:last-of-type")?.textContent?.includes("send_email →"))
    await idle(page)
    const answer = await page.textContent("[data-role=assistant] .text:last-of-type")
    expect(answer).toContain("get_weather →")
    expect(answer).toContain("\"sent\":true")
    expect(await page.$("[role=alert]")).toBeNull()
    await page.close()
  }, 120_000)

  it("shows an error when the service cuts the stream", async () => {
    const page = await open(await start({ faults: { script: [{ _tag: "CutStream", afterChunks: 3 }] }, stream: { interval: 20 } }))
    await page.fill("input", "Tell me a long story about the sea")
    await page.click("button[type=submit]")
    await page.waitForSelector("[role=alert]")
    await idle(page)
    expect(await page.textContent("[role=alert]")).toContain("The request failed.")
    await page.close()
  }, 120_000)

  it("shows an error when the answer is cut between the server and the page", async () => {
    const url = await start()
    const page = await open(url)
    // The first frames of an answer, then the end of the body: no `finish`, no `[DONE]`.
    await page.route("**/api/chat", (route) =>
      route.fulfill({
        status: 200,
        headers: { "content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1" },
        body: ["start", "start-step"].map((type) => `data: {"type":"${type}"}\n\n`).join("") +
          "data: {\"type\":\"text-start\",\"id\":\"t\"}\n\ndata: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"Once upon\"}\n\n"
      }))
    await page.fill("input", "Hello")
    await page.click("button[type=submit]")
    await page.waitForSelector("[role=alert]")
    await idle(page)
    expect(await page.textContent("[role=alert]")).toContain("cut off")
    await page.close()
  }, 120_000)
})
