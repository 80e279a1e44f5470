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
 * says it prints. An example that Node cannot run here says which test runs
 * it: `<!-- example: browser.ts, run by test/browser.test.ts -->` (that test
 * compares its output). A file under `test/` is a test file vitest runs.
 *
 * Every other block of code (```ts, ```js) must say why it is not a
 * program, on the line before it: `<!-- fragment: declarations -->` (types,
 * signatures), a value or a line to use inside a program shown elsewhere.
 * Blocks in other languages (sh, text, none) are shell commands, output and
 * diagrams; the CLI's are checked by packages/cli/test/bin.test.ts.
 */
import { Emulator } from "@switchboard/emulator"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { format } from "node:util"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { pathOf, shown, src, unmarked } from "./examples.js"

const runtime = ManagedRuntime.make(Emulator.layer())
const saved = {
  url: process.env["SWITCHBOARD_BASE_URL"],
  key: process.env["SWITCHBOARD_API_KEY"],
  journal: process.env["SWITCHBOARD_JOURNAL_DIR"]
}

beforeAll(async () => {
  const emulator = await runtime.runPromise(Emulator.Emulator)
  process.env["SWITCHBOARD_BASE_URL"] = emulator.url
  process.env["SWITCHBOARD_API_KEY"] = emulator.apiKey
  // layerConfig()'s journal: in a directory of the test's, not the user's state directory.
  process.env["SWITCHBOARD_JOURNAL_DIR"] = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-examples-journal-"))
})

afterAll(async () => {
  for (
    const [name, value] of [
      ["SWITCHBOARD_BASE_URL", saved.url],
      ["SWITCHBOARD_API_KEY", saved.key],
      ["SWITCHBOARD_JOURNAL_DIR", saved.journal]
    ] as const
  ) {
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

describe("the examples of the docs", () => {
  it("every file of src/ is shown in a doc, and every example shown is a file", () => {
    const files = Fs.readdirSync(src).sort()
    expect([...new Set(shown.map((s) => s.file).filter((file) => !file.startsWith("test/")))].sort()).toEqual(files)
  })

  it("every block of code in the docs is an example or says it is a fragment", () => {
    expect(unmarked).toEqual([])
  })

  for (const example of shown) {
    it(`${example.doc}: ${example.file} is shown as it is`, () => {
      expect(example.code, `${example.doc} shows ${example.file} differently`).toBe(Fs.readFileSync(pathOf(example.file), "utf8"))
    })
  }

  // Sequential: each run captures the console of this process.
  for (const example of shown.filter((e) => e.runBy === undefined && !e.file.startsWith("test/"))) {
    it(`${example.doc}: ${example.file} prints what the doc says`, async () => {
      expect(example.output, `${example.doc} shows no "Prints:" after ${example.file}`).toBeDefined()
      expect(await printed(example.file)).toBe(example.output)
    })
  }
})
