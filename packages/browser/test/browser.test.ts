/**
 * A real browser: Debian's Chromium, driven by playwright-core, loads a page
 * bundled from this package (./page/main.ts) with esbuild. The page is served
 * from its own origin on 127.0.0.1 and calls an in-process emulator on
 * another origin (so CORS is exercised), plus one call through a same-origin
 * proxy with no key in the page. It writes each check's outcome into
 * `window.__results`; the tests below assert them.
 */
import * as Emulator from "@switchboard/emulator/Emulator"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as esbuild from "esbuild"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { forward } from "./proxy.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
/** The screenshot goes here (gitignored); the bundled page goes to a temporary directory. */
const output = Path.join(here, "..", ".test-output")
let pageDir: string
const executablePath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
/** The emulator paces stream events on the real clock, so a page that renders as bytes arrive shows it. */
const streamInterval = 15

type Results = Record<string, { readonly ok: boolean; readonly [key: string]: unknown }>

let runtime: ManagedRuntime.ManagedRuntime<Emulator.Emulator, unknown> | undefined
let emulator: Emulator.Emulator["Service"]
let server: Http.Server | undefined
let browser: Browser | undefined
let page: Page
let pageUrl: string
let results: Results
const pageLog: Array<string> = []
/** The `traceparent` of each request the page's server forwarded to the emulator. */
const proxiedTraceparents: Array<string | undefined> = []

const bundlePage = async () => {
  pageDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-browser-page-"))
  await esbuild.build({
    entryPoints: [Path.join(here, "page", "main.ts")],
    outfile: Path.join(pageDir, "page.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    conditions: ["@switchboard/source"],
    sourcemap: true,
    logLevel: "silent"
  })
  Fs.copyFileSync(Path.join(here, "page", "index.html"), Path.join(pageDir, "index.html"))
}

const staticFiles: Record<string, string> = {
  "/": "index.html",
  "/index.html": "index.html",
  "/page.js": "page.js",
  "/page.js.map": "page.js.map"
}
const contentTypes: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".map": "application/json" }

/** The page's origin: its files, and `/v1/*` forwarded to the emulator with the key added (docs/browser.md). */
const startPageServer = () =>
  new Promise<string>((resolve, reject) => {
    const proxy = forward(new URL(emulator.url), emulator.apiKey)
    server = Http.createServer((request, response) => {
      const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname
      if (path.startsWith("/v1/")) {
        proxiedTraceparents.push(request.headers["traceparent"] as string | undefined)
        return proxy(request, response)
      }
      if (path === "/coded/v1/chat/completions") return coded(request, response)
      const moved = /^\/moved\/(\d{3})\/(other|same)\/v1\/chat\/completions$/.exec(path)
      if (moved !== null) {
        const location = moved[2] === "other" ? `${elsewhere.url}/v1/chat/completions` : "/landed/v1/chat/completions"
        return void response.writeHead(Number(moved[1]), { location }).end()
      }
      if (path === "/landed/v1/chat/completions") return elsewhere.answer("landed", request, response)
      const file = staticFiles[path]
      if (file === undefined) return void response.writeHead(404).end()
      response.writeHead(200, { "content-type": contentTypes[Path.extname(file)] ?? "application/octet-stream" })
      response.end(Fs.readFileSync(Path.join(pageDir, file)))
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server!.address() as AddressInfo).port}`))
  })

/**
 * `/coded`: a chat reply coded as the request's model says (gzip, br,
 * deflate, or compress, which no browser decodes), whole or streamed.
 */
const coded = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
  const parts: Array<Buffer> = []
  request.on("data", (part: Buffer) => parts.push(part))
  request.on("end", () => {
    const { model, stream } = JSON.parse(Buffer.concat(parts).toString()) as { model: string; stream?: boolean }
    const chunk = (content: string, finish: string | null) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`
    const text = stream ?
      chunk("coded ", null) + chunk(model, "stop") + "data: [DONE]\n\n" :
      JSON.stringify({ id: "c", object: "chat.completion", created: 1, model, choices: [{ index: 0, message: { role: "assistant", content: `coded ${model}` }, finish_reason: "stop" }] })
    // Each coding of the list applied in turn (`identity, gzip`: gzip); one no browser takes leaves the bytes.
    const body = model.split(",").map((name) => name.trim().toLowerCase()).reduce(
      (bytes, name) =>
        name === "gzip" || name === "x-gzip" ? Zlib.gzipSync(bytes) : name === "br" ? Zlib.brotliCompressSync(bytes) : name === "deflate" ? Zlib.deflateSync(bytes) : bytes,
      Buffer.from(text)
    )
    response.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json", "content-encoding": model })
    response.end(body)
  })
}

/**
 * Where the redirects of `/moved` point: a server on another origin (and
 * `/landed` on the page's own) that would answer a followed request with a
 * chat reply, CORS allowed, and records every request it gets. It must get none.
 */
const elsewhere = {
  url: "",
  reached: [] as Array<string>,
  server: undefined as Http.Server | undefined,
  answer(where: string, request: Http.IncomingMessage, response: Http.ServerResponse) {
    const cors = {
      "access-control-allow-origin": "*",
      "access-control-allow-headers": "*",
      "access-control-allow-methods": "POST, GET"
    }
    if (request.method === "OPTIONS") return void response.writeHead(204, cors).end()
    elsewhere.reached.push(`${where} ${request.method} ${String(request.headers["x-api-key"])}`)
    const reply = { id: "c", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: `from ${where}` }, finish_reason: "stop" }] }
    response.writeHead(200, { ...cors, "content-type": "application/json" }).end(JSON.stringify(reply))
  },
  start: () =>
    new Promise<void>((resolve) => {
      elsewhere.server = Http.createServer((request, response) => elsewhere.answer("elsewhere", request, response))
      elsewhere.server.listen(0, "127.0.0.1", () => {
        elsewhere.url = `http://127.0.0.1:${(elsewhere.server!.address() as AddressInfo).port}`
        resolve()
      })
    })
}

const launch = () => {
  if (!Fs.existsSync(executablePath)) {
    throw new Error(
      `Chromium was not found at ${executablePath}. The browser tests drive Debian's Chromium: ` +
        "run `apt-get update && apt-get install -y chromium` (or set CHROMIUM_PATH to a Chromium binary)."
    )
  }
  return chromium.launch({
    executablePath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
}

/** Loads (or reloads) the page and waits for it to finish every check; the page signals, nothing sleeps. */
const runPage = async (url: string, tab: Page = page): Promise<Results> => {
  await tab.goto(url)
  try {
    await tab.waitForFunction(() => window.__done === true, undefined, { timeout: 25_000 })
  } catch (error) {
    throw new Error(`the page did not finish: ${String(error)}\npage log:\n${pageLog.join("\n")}`)
  }
  return tab.evaluate(() => window.__results) as Promise<Results>
}

const result = (name: string) => {
  const found = results[name]
  expect(found, `no result for ${name}; page log:\n${pageLog.join("\n")}`).toBeDefined()
  expect(found, JSON.stringify(found)).toMatchObject({ ok: true })
  return found as Record<string, unknown>
}

/**
 * A failed set-up (Chromium missing, above all) is rethrown by every test, so
 * the run reports them failed with its message rather than skipped.
 */
let setupError: unknown
const ready = () => {
  if (setupError !== undefined) throw setupError
}

beforeAll(async () => {
  try {
    await setUp()
  } catch (error) {
    setupError = error
  }
})

const setUp = async () => {
  Fs.mkdirSync(output, { recursive: true })
  browser = await launch()
  await bundlePage()
  runtime = ManagedRuntime.make(Emulator.layer({ stream: { interval: `${streamInterval} millis` } }))
  emulator = await runtime.runPromise(Emulator.Emulator)
  await elsewhere.start()
  const origin = await startPageServer()
  pageUrl = `${origin}/index.html?${new URLSearchParams({ api: emulator.url, key: emulator.apiKey })}`
  page = await browser.newPage({ viewport: { width: 900, height: 1000 } })
  page.on("console", (message) => pageLog.push(`[${message.type()}] ${message.text()}`))
  page.on("pageerror", (error) => pageLog.push(`[pageerror] ${error.message}`))
  results = await runPage(pageUrl)
  await page.screenshot({ path: Path.join(output, "browser.png"), fullPage: true })
}

afterAll(async () => {
  await browser?.close()
  if (server !== undefined) {
    server.closeAllConnections()
    await new Promise((resolve) => server!.close(resolve))
  }
  elsewhere.server?.closeAllConnections()
  elsewhere.server?.close()
  await runtime?.dispose()
  if (pageDir !== undefined) Fs.rmSync(pageDir, { recursive: true, force: true })
})

describe("@switchboard/browser in Chromium", () => {
  it("the page runs on another origin than the emulator (CORS) and every check passed", () => {
    ready()
    expect(new URL(pageUrl).origin).not.toBe(new URL(emulator.url).origin)
    const failed = Object.entries(results).filter(([, r]) => !r.ok)
    expect(failed, pageLog.join("\n")).toEqual([])
  })

  it("chat", () => {
    ready()
    expect(result("chat")["content"]).toContain(`You said: "Hello from a page".`)
  })

  it("a streamed chat renders its deltas as they arrive", () => {
    ready()
    const stream = result("stream")
    expect(stream["content"]).toBe(results["chat"]!["content"])
    expect(stream["updates"]).toBeGreaterThan(1)
    // The emulator waits `streamInterval` ms between events: a buffered body
    // would render everything in one go, a streamed one over that time.
    expect(stream["spanMillis"]).toBeGreaterThan(streamInterval * 3)
  })

  it("an image generation shown as an <img>", () => {
    ready()
    const image = result("image")
    expect(image["url"]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/img_.*\.png$/)
    expect(image).toMatchObject({ naturalWidth: 1024, naturalHeight: 1024 })
  })

  it("an image-to-image from a File made in the page, its media type sniffed", () => {
    ready()
    const image = result("imageToImage")
    expect(image).toMatchObject({ mediaType: "image/png", naturalWidth: 1792, naturalHeight: 1024 })
    expect(image["alt"]).toContain(`image/png ${image["byteLength"]} bytes (data URI)`)
  })

  it("a Blob attachment in a chat message, and attachment errors", () => {
    ready()
    expect(result("attachmentMessage")["content"]).toContain("Received 1 image: image/png")
    expect(result("attachmentErrors")).toMatchObject({
      notImage: { reason: "UnknownMediaType", source: "notes.txt" },
      tooLarge: { reason: "TooLarge" }
    })
  })

  it("a video task polled to succeed, journaled in localStorage while it ran", () => {
    ready()
    const video = result("video")
    expect(video).toMatchObject({ journaledWhileRunning: true, keptWithUrl: true, last: "Succeeded", journalAfter: 0 })
    expect(video["statuses"]).toEqual(["queued", "processing", "Succeeded"])
    expect(video["videoUrl"]).toMatch(/\/files\/task_.*\.mp4$/)
  })

  it("a localStorage journal at its quota: nothing is paid that cannot be recorded, and the error names QuotaExceededError", async () => {
    ready()
    const atQuota = result("journalAtQuota")
    for (const name of ["full", "nearlyFull"]) {
      expect(atQuota[name], name).toMatchObject({ error: "JournalError", code: "QuotaExceededError" })
    }
    expect(atQuota["journalAfter"]).toBe(0)
    const requests = await runtime!.runPromise(emulator.requests)
    expect(requests.filter((r) => JSON.stringify(r.body).includes("journal at quota"))).toEqual([])
  })

  it("embeddings", () => {
    ready()
    expect(result("embeddings")).toMatchObject({ count: 2, dimensions: 8 })
  })

  it("a moderation", () => {
    ready()
    expect(result("moderation")).toMatchObject({ violentFlagged: true, calmFlagged: false })
  })

  it("the testing kit's scripted layer runs in the page: a retried 503, then create and stream alike", () => {
    ready()
    expect(result("scripted")).toMatchObject({ created: "Hello from a script", streamed: "Hello from a script", calls: [false, false, true] })
  })

  it("compressed replies: gzip, br and deflate decode, whole and streamed; a coding no browser takes is typed", () => {
    ready()
    expect(result("compressed")).toMatchObject({
      whole: ["coded gzip", "coded br", "coded deflate"],
      streamed: ["coded gzip", "coded br", "coded deflate"]
    })
    expect(["ResponseDecodeError", "TransportError"]).toContain(result("compressed")["refused"])
  })

  it("content-encoding lists Chromium's fetch hands on coded (identity, gzip) are undone by the wire; one it cannot is typed, quoting nothing", () => {
    ready()
    const lists = ["identity, gzip", "gzip, identity", "Gzip , Identity", "GZIP", "x-gzip", "deflate, identity"]
    expect(result("codingLists")).toMatchObject({
      whole: lists.map((list) => `coded ${list}`),
      streamed: lists.map((list) => `coded ${list}`)
    })
    // No DecompressionStream for brotli in Chromium (yet): a typed error, not bytes read as JSON.
    const refused = result("codingLists")["refused"] as Array<string>
    for (const line of refused) expect(line).toMatch(/^ResponseDecodeError: [\x20-\x7e]*$/)
  })

  it("a same-origin proxy adds the key: the page holds none", async () => {
    ready()
    const proxy = result("proxy")
    expect(proxy["content"]).toContain(`You said: "via the proxy".`)
    expect(proxy["streamed"]).toBe(proxy["content"])
    expect(proxy["updates"]).toBeGreaterThan(1)
    const requests = await runtime!.runPromise(emulator.requests)
    const proxied = requests.filter((r) => JSON.stringify(r.body).includes("via the proxy"))
    expect(proxied.map((r) => r.authorized)).toEqual([true, true])
    // Each call (the whole one, then the stream) left the page with its span's W3C traceparent.
    expect(proxiedTraceparents).toEqual([
      expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
      expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    ])
  })

  it("the key guard refuses a raw key at layer construction, in apiKey or any secret header", () => {
    ready()
    const guard = result("keyGuard")
    expect(guard).toMatchObject({
      tag: "ApiKeyInBrowserError",
      isGuardError: true,
      where: "apiKey",
      viaHeaderTag: "ApiKeyInBrowserError",
      viaHeaderWhere: "headers.authorization",
      viaSecretHeaders: ["headers.x-api-key", "headers.api-key", "headers.x-auth-token"]
    })
    expect(guard["message"]).toContain("same-origin proxy")
    expect(guard["message"]).toContain("allowApiKeyInBrowser: true")
    expect(guard["message"]).not.toContain("sk-live-1234567890")
  })

  it("a secret header given per call (withRequestOptions) is refused in the page: nothing reaches the service", async () => {
    ready()
    const guard = result("callGuard")
    const refused = { tag: "ConfigurationError", field: "requestOptions.headers.x-api-key", leaked: false }
    expect(guard).toMatchObject({ whole: refused, streamed: refused })
    expect(guard["message"]).toContain("allowApiKeyInBrowser: true")
    const requests = await runtime!.runPromise(emulator.requests)
    expect(requests.filter((r) => JSON.stringify(r.body).includes("a key per call"))).toEqual([])
  })

  it("a redirect (301, 302, 303, 307, 308) to another origin or the same is a ClientError, never followed", () => {
    ready()
    const redirects = result("redirects")
    const outcomes = redirects["outcomes"] as Array<string>
    expect(outcomes).toHaveLength(20)
    // The browser hides an opaque redirect's status and location: the error says so, and that it was not followed.
    for (const outcome of outcomes) expect(outcome).toMatch(/: ClientError: .*redirect.*never followed/)
    expect(elsewhere.reached).toEqual([])
  })

  it("a reloaded page resumes the video task it left running", async () => {
    ready()
    const submitted = result("submitForResume")
    const taskId = submitted["taskId"] as string
    expect(submitted["journal"]).toEqual([taskId])
    const reloaded = await runPage(`${pageUrl}&phase=resume`)
    const resumed = reloaded["resume"]
    expect(resumed, pageLog.join("\n")).toMatchObject({
      ok: true,
      before: [taskId],
      finished: [{ taskId, prompt: "a reloaded page resumes me", last: "Succeeded" }],
      journalAfter: 0,
      storage: true
    })
  })

  it("two tabs never both follow a task; once the tab holding it is closed, another resumes it at once", async () => {
    ready()
    // Tabs of one origin in a fresh profile: they share its storage and its locks.
    const tabs = await browser!.newContext()
    const [holder, other] = [await tabs.newPage(), await tabs.newPage()]
    for (const tab of [holder, other]) tab.on("pageerror", (error) => pageLog.push(`[pageerror] ${error.message}`))
    const taskId = (await runPage(`${pageUrl}&phase=hold`, holder))["hold"]?.["taskId"]
    expect(taskId, pageLog.join("\n")).toEqual(expect.any(String))
    const meanwhile = (await runPage(`${pageUrl}&phase=resume`, other))["resume"]
    expect(meanwhile, pageLog.join("\n")).toMatchObject({ ok: true, busy: [taskId], finished: [] })
    await holder.close()
    const after = (await runPage(`${pageUrl}&phase=resume`, other))["resume"]
    expect(after, pageLog.join("\n")).toMatchObject({ ok: true, busy: [], finished: [{ taskId, last: "Succeeded" }] })
    await tabs.close()
  })
})
