/**
 * The programs of README.md and docs/*.md are the files of src/: each is
 * marked in the markdown as
 *
 *     <!-- example: readme.ts -->
 *     ```ts
 *     …the file, verbatim…
 *     ```
 *
 *     Prints:
 *
 *     ```text
 *     …what it prints against the emulator…
 *     ```
 *
 * `pnpm typecheck` compiles the files; this test checks that the markdown
 * shows each file as it is, and runs it against the emulator (through
 * `SWITCHBOARD_BASE_URL` / `SWITCHBOARD_API_KEY`), in an empty directory
 * but for a `photo.png`, to compare what it prints with what the markdown
 * says it prints.
 */
import { Emulator } from "@switchboard/emulator"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { format } from "node:util"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"

const here = Path.dirname(fileURLToPath(import.meta.url))
const src = Path.resolve(here, "../src")
const root = Path.resolve(here, "../../..")

interface Shown {
  readonly doc: string
  readonly file: string
  readonly code: string
  readonly output: string
}

const marked = /<!-- example: (\S+) -->\n```ts\n([^]*?)```\n\nPrints:\n\n```text\n([^]*?)```/g

const docs = ["README.md", ...Fs.readdirSync(Path.join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]
const shown: ReadonlyArray<Shown> = docs.flatMap((doc) =>
  [...Fs.readFileSync(Path.join(root, doc), "utf8").matchAll(marked)].map((m) => ({ doc, file: m[1]!, code: m[2]!, output: m[3]! }))
)

const runtime = ManagedRuntime.make(Emulator.layer())
const saved = { url: process.env["SWITCHBOARD_BASE_URL"], key: process.env["SWITCHBOARD_API_KEY"] }

beforeAll(async () => {
  const emulator = await runtime.runPromise(Emulator.Emulator)
  process.env["SWITCHBOARD_BASE_URL"] = emulator.url
  process.env["SWITCHBOARD_API_KEY"] = emulator.apiKey
})

afterAll(async () => {
  for (const [name, value] of [["SWITCHBOARD_BASE_URL", saved.url], ["SWITCHBOARD_API_KEY", saved.key]] as const) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  await runtime.dispose()
})

/** A 1×1 PNG: the `photo.png` the examples find in their directory. */
const photo = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64"
)

/**
 * Runs a module (its top-level await is the program) in a new directory
 * holding `photo.png`, and returns what it printed, in order.
 */
const printed = async (file: string): Promise<string> => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-example-"))
  Fs.writeFileSync(Path.join(directory, "photo.png"), photo)
  const cwd = process.cwd()
  process.chdir(directory)
  let out = ""
  const log = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
    out += `${format(...args)}\n`
  })
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")
    return true
  })
  try {
    await import(pathToFileURL(Path.join(src, file)).href)
  } finally {
    log.mockRestore()
    write.mockRestore()
    process.chdir(cwd)
    Fs.rmSync(directory, { recursive: true, force: true })
  }
  return out
}


describe("tmp outputs", () => {
  for (const file of (process.env["EXAMPLES"] ?? "").split(",").filter(Boolean)) {
    it(file, async () => {
      Fs.mkdirSync("/tmp/nc2/out", { recursive: true })
      Fs.writeFileSync(`/tmp/nc2/out/${file}.txt`, await printed(file))
    }, 60_000)
  }
})
