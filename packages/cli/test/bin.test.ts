/**
 * The built `switchboard` command run as real processes against an emulator
 * started in this test process: output, files and exit codes, errors
 * included, and a video interrupted with SIGINT then finished by `video resume`.
 *
 * dist is built once, in `beforeAll`, with `tsc -b packages/cli/tsconfig.build.json`
 * (incremental, so a no-op when up to date). Every process test lives in this
 * one file so that no two builds ever race on the same dist.
 */
import { Emulator } from "@switchboard/emulator"
import { Cluster, VideoWorkflow } from "@switchboard/workflow"
import * as Redacted from "effect/Redacted"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  bin,
  build,
  lines,
  packageDir,
  pngSize,
  removeTempDirs,
  run,
  serviceAnswering,
  start,
  stopAll,
  tempDir,
  type TestService,
  tinyPng,
  videoServiceNaming
} from "./helpers.js"
import { type Postgres, startPostgres } from "@switchboard/test-support/Postgres"

const runtime = ManagedRuntime.make(Emulator.layer())
let emulator: Emulator.Emulator["Service"]
let env: Record<string, string>

beforeAll(async () => {
  build()
  emulator = await runtime.runPromise(Emulator.Emulator)
  env = { SWITCHBOARD_BASE_URL: emulator.url, SWITCHBOARD_API_KEY: emulator.apiKey }
}, 240_000)

afterAll(async () => {
  await stopAll()
  await runtime.dispose()
  removeTempDirs()
})

const requests = () => runtime.runPromise(emulator.requests)

/** The chat requests the emulator saw whose last user message mentions `text`. */
const chatRequestsAbout = async (text: string) =>
  (await requests()).filter((r) => r.path === "/v1/chat/completions" && JSON.stringify(r.body).includes(text))

/** A port on 127.0.0.1 where nothing listens: one just let go. */
const refusedPort = () =>
  new Promise<number>((resolve) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** A failure is one line on stderr, with no stack trace. */
const expectOneLine = (stderr: string) => {
  expect(lines(stderr)).toHaveLength(1)
  expect(stderr).not.toMatch(/\n\s+at /)
}

describe.concurrent("switchboard models", { timeout: 90_000 }, () => {
  it("prints the models as a table", async () => {
    const result = await run(["models"], { env })
    expect(result.code).toBe(0)
    expect(lines(result.stdout)[0]).toMatch(/^MODEL\s+OWNED BY\s+CREATED$/)
    for (const id of ["gpt-4o-mini", "image2", "video-1", "text-embedding-3-small"]) expect(result.stdout).toContain(id)
  })

  it("prints JSON with --json", async () => {
    const result = await run(["models", "--json"], { env })
    expect(result.code).toBe(0)
    const models = JSON.parse(result.stdout) as ReadonlyArray<{ id: string }>
    expect(models.map((m) => m.id)).toContain("video-1")
  })
})

/** What a hostile service puts in its strings: a window title, a cleared screen, a line overwritten, a C1 CSI. */
const hostile = "\u001b]0;pwned\u0007\u001b[2J\rover\u009b31m"
/** The same, as the CLI must show it. */
const hostileShown = String.raw`\u001b]0;pwned\u0007\u001b[2J\u000dover\u009b31m`
/** Any control character but newline and tab: none may reach the terminal from the service. */
// eslint-disable-next-line no-control-regex
const controlChar = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/

/**
 * A service on 127.0.0.1 whose every string is hostile: model ids and
 * owners, `created` out of any date's range, an error message, a task's
 * status. Close it when done.
 */
const hostileService = (): Promise<TestService> =>
  serviceAnswering((path) =>
    path === "/v1/models"
      ? {
        json: {
          object: "list",
          data: [
            { id: `model-${hostile}`, object: "model", created: 1e300, owned_by: hostile },
            { id: "far-past", object: "model", created: -1e300, owned_by: "x" },
            { id: "plain", object: "model", created: 1_700_000_000, owned_by: "x" },
            { id: "two\nrows", object: "model", created: null, owned_by: "x" }
          ]
        }
      }
      : path === "/v1/chat/task/status"
      ? { json: { status: `running${hostile}`, progress: 40 } }
      : { status: 400, json: { error: { message: `bad request ${hostile}\n✖ spoofed`, type: "invalid_request_error" } } }
  )

describe("a hostile service's strings reach the terminal escaped", { timeout: 90_000 }, () => {
  let service: TestService
  let hostileEnv: Record<string, string>
  beforeAll(async () => {
    service = await hostileService()
    hostileEnv = { SWITCHBOARD_BASE_URL: service.url, SWITCHBOARD_API_KEY: "sk-test" }
  })
  afterAll(() => service.close())

  it("models: ids and owners escaped; a created out of range (1e300, -1e300) is no date, exit 0", async () => {
    const result = await run(["models"], { env: hostileEnv })
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(result.stdout).not.toMatch(controlChar)
    const rows = lines(result.stdout)
    // The columns are as wide as the escaped text.
    expect(rows[1]!.trimEnd()).toBe(`model-${hostileShown}  ${hostileShown}`)
    expect(rows[2]!.trimEnd()).toBe(`far-past${" ".repeat(hostileShown.length)}x`)
    expect(rows[3]).toMatch(/^plain\s+x\s+2023-11-14$/)
    // A line break in a cell is shown, never a new row.
    expect(rows[4]).toMatch(/^two\\u000arows\s+x\s*$/)
    expect(rows).toHaveLength(5)
  })

  it("models --json: valid JSON, C1 controls escaped too", async () => {
    const result = await run(["models", "--json"], { env: hostileEnv })
    expect(result.code).toBe(0)
    expect(result.stdout).not.toMatch(controlChar)
    expect((JSON.parse(result.stdout) as ReadonlyArray<{ id: string }>)[0]!.id).toBe(`model-${hostile}`)
  })

  it("an error message of the service: one line (its line break shown), escaped, exit 1", async () => {
    const result = await run(["chat", "hello"], { env: hostileEnv })
    expect(result.code).toBe(1)
    expect(result.stderr).not.toMatch(controlChar)
    expectOneLine(result.stderr)
    expect(result.stderr).toContain(`bad request ${hostileShown}\\u000a✖ spoofed`)
  })

  it("video status: the task id given and the status the service answers, escaped", async () => {
    const result = await run(["video", "status", "task\u001b[2J"], { env: hostileEnv })
    expect(result.code).toBe(0)
    expect(result.stdout).not.toMatch(controlChar)
    expect(result.stdout).toBe(`task\\u001b[2J  running${hostileShown}  40%\n`)
  })

  it("video: a task id from the service, in the narration and the saved file's name, escaped", async () => {
    const named = await videoServiceNaming(`task-${hostile}`)
    try {
      const result = await run(["video", "a fox", "--poll-interval", "100ms"], {
        env: { SWITCHBOARD_BASE_URL: named.url, SWITCHBOARD_API_KEY: "sk-test" },
        cwd: tempDir("hostile-task")
      })
      expect(result.code).toBe(0)
      expect(result.stdout + result.stderr).not.toMatch(controlChar)
      expect(result.stderr).toContain(`Submitted video task task-${hostileShown} (video-1)`)
    } finally {
      await named.close()
    }
  })
})

/**
 * The transcripts of docs/cli.md (`$ switchboard …` and what it printed),
 * run against the emulator. Those of commands that write files named by the
 * time, follow tasks or run until stopped (image, video, emulator, demo) are
 * checked only when they fail at once with one `✖` line; the tests below
 * cover the rest. Counters and times of the emulator (request and completion
 * ids, `created`) are not compared.
 */
const transcripts = (): ReadonlyArray<{ readonly command: string; readonly output: string }> => {
  const doc = Fs.readFileSync(Path.join(packageDir, "../../docs/cli.md"), "utf8")
  // The blocks with no language (a fence opens, the next one closes).
  const blocks = doc.split(/^```.*$/m).filter((_, i) => i % 2 === 1).filter((block) => block.startsWith("\n$ "))
  return blocks.flatMap((block) =>
    block.slice(1).split(/^(?=\$ )/m).filter((part) => part.startsWith("$ switchboard ")).map((part) => {
      const [command, ...output] = part.trimEnd().split("\n")
      return { command: command!.slice(2), output: output.join("\n") }
    })
  ).filter(({ command, output }) => !/^switchboard (image|video|emulator|demo)\b/.test(command) || /^✖[^\n]*$/.test(output))
}

/** The words of a command line, in double quotes or not. */
const words = (command: string) => [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!)

const withoutCounters = (text: string) =>
  text.replace(/\b(req_|chatcmpl-)\d+/g, "$1N").replace(/"created": \d+/g, "\"created\": N")

describe.concurrent("docs/cli.md", { timeout: 90_000 }, () => {
  it("shows transcripts to check", () => {
    expect(transcripts().length).toBeGreaterThanOrEqual(10)
  })

  for (const { command, output } of transcripts()) {
    it(command, async () => {
      // The transcript of a missing configuration is run without one.
      const result = await run(words(command).slice(1), { env: /^✖ No (base URL|API key)/.test(output) ? {} : env })
      expect(withoutCounters(`${result.stdout}${result.stderr}`.trimEnd())).toBe(withoutCounters(output))
    })
  }
})

describe("start-up", { timeout: 90_000 }, () => {
  it("models loads the bundle only: no module from node_modules, nothing of the emulator, the agent, the workflows or fast-check", async () => {
    const loadedFile = Path.join(tempDir("loads"), "loaded.txt")
    const recorder = pathToFileURL(Path.join(packageDir, "test/fixtures/record-loads.mjs")).href
    const result = await run(["models"], { env: { ...env, SWITCHBOARD_TEST_LOADED: loadedFile }, node: ["--import", recorder] })
    expect(result.code).toBe(0)
    const loaded = Fs.readFileSync(loadedFile, "utf8").split("\n").filter((url) => url !== "").map((url) => fileURLToPath(url))
    const bundle = Path.join(packageDir, "dist/bundle")
    const chunks = loaded.filter((file) => file !== bin && !file.startsWith(Path.join(packageDir, "test")))
    expect(chunks.filter((file) => Path.dirname(file) !== bundle)).toEqual([])
    // What went into each chunk, as esbuild recorded it (scripts/bundle.mjs).
    const meta = JSON.parse(Fs.readFileSync(Path.join(bundle, "meta.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>
    }
    const sources = chunks.flatMap((file) => Object.keys(meta.outputs[Path.relative(packageDir, file)]?.inputs ?? {}))
    expect(sources).toContain("dist/commands/models.js")
    const unneeded = ["../emulator/", "../agent/", "../workflow/", "/fast-check/", "/@effect/cluster/"]
    expect(sources.filter((source) => unneeded.some((path) => source.includes(path)))).toEqual([])
  })
})

describe("the compile cache", { timeout: 90_000 }, () => {
  it("is kept in the user's own cache directory, readable by no one else, never in the shared temporary directory", async () => {
    const cache = tempDir("xdg-cache")
    const result = await run(["--version"], { env: { XDG_CACHE_HOME: cache }, unset: ["NODE_COMPILE_CACHE", "NODE_DISABLE_COMPILE_CACHE"] })
    expect(result.code).toBe(0)
    const dir = Path.join(cache, "switchboard", "compile-cache")
    expect(Fs.statSync(dir).mode & 0o777).toBe(0o700)
    expect(Fs.readdirSync(dir).length).toBeGreaterThan(0)
  })

  it("is not used in a directory that others can write", async () => {
    const cache = tempDir("shared-cache")
    const shared = Path.join(cache, "switchboard", "compile-cache")
    Fs.mkdirSync(shared, { recursive: true })
    Fs.chmodSync(shared, 0o777)
    const result = await run(["--version"], { env: { XDG_CACHE_HOME: cache }, unset: ["NODE_COMPILE_CACHE", "NODE_DISABLE_COMPILE_CACHE"] })
    expect(result.code).toBe(0)
    expect(Fs.readdirSync(shared)).toEqual([])
  })
})

describe.concurrent("switchboard chat", { timeout: 90_000 }, () => {
  it("streams the reply", async () => {
    const result = await run(["chat", "Hello from the streaming test"], { env })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^You said: "Hello from the streaming test"\. .*\n$/)
    const [sent] = await chatRequestsAbout("Hello from the streaming test")
    expect((sent?.body as { stream?: boolean }).stream).toBe(true)
  })

  it("prints the accumulated completion with --json", async () => {
    const result = await run(["chat", "Hello as JSON", "--json"], { env })
    expect(result.code).toBe(0)
    const completion = JSON.parse(result.stdout) as { choices: ReadonlyArray<{ message: { content: string }; finish_reason: string }> }
    expect(completion.choices[0]?.message.content).toContain("You said: \"Hello as JSON\"")
    expect(completion.choices[0]?.finish_reason).toBe("stop")
  })

  it("sends images from files and URLs with --image", async () => {
    const dir = tempDir("chat-image")
    Fs.writeFileSync(Path.join(dir, "dot.png"), tinyPng)
    const result = await run(["chat", "What is in these?", "--image", "dot.png", "--image", "https://example.com/cat.jpg"], { env, cwd: dir })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`Received 2 images: image/png ${tinyPng.length} bytes (data URI), https://example.com/cat.jpg (URL).`)
  })

  it("takes --base-url and --api-key instead of the environment", async () => {
    const result = await run(["chat", "Hi", "--base-url", emulator.url, "--api-key", emulator.apiKey])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("You said: \"Hi\"")
  })

  it("takes the key from --api-key-file (its first line), out of the process list; with --api-key too it is a usage error", async () => {
    const file = Path.join(tempDir("api-key-file"), "key")
    Fs.writeFileSync(file, `${emulator.apiKey}\n`, { mode: 0o600 })
    const chat = start(["chat", "Hi from a file", "--base-url", emulator.url, "--api-key-file", file], { unset: ["SWITCHBOARD_API_KEY"] })
    const argv = Fs.readFileSync(`/proc/${chat.pid}/cmdline`, "utf8")
    expect(argv).toContain("--api-key-file")
    expect(argv).not.toContain(emulator.apiKey)
    const result = await chat.exited
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("You said: \"Hi from a file\"")
    const both = await run(["chat", "Hi", "--api-key", emulator.apiKey, "--api-key-file", file], { env })
    expect(both.code).toBe(2)
    expect(both.stderr.trim()).toBe("✖ --api-key and --api-key-file give the key twice: pass one")
    const help = await run(["chat", "--help"], { env })
    expect(help.stdout).toContain("--api-key-file")
  })
})

describe.concurrent("errors", { timeout: 90_000 }, () => {
  it("a missing key names the variable to set, exit 2", async () => {
    const result = await run(["chat", "Hi"], { env: { SWITCHBOARD_BASE_URL: emulator.url } })
    expect(result.code).toBe(2)
    expectOneLine(result.stderr)
    expect(result.stderr).toMatch(/^✖ No API key: set SWITCHBOARD_API_KEY \(or pass --api-key\)/)
  })

  it("a missing base URL and key name both variables, exit 2", async () => {
    const result = await run(["models"])
    expect(result.code).toBe(2)
    expectOneLine(result.stderr)
    expect(result.stderr).toContain("set SWITCHBOARD_BASE_URL and SWITCHBOARD_API_KEY")
  })

  it("a wrong key is an authentication error, exit 1", async () => {
    const result = await run(["models", "--api-key", "sk-wrong"], { env })
    expect(result.code).toBe(1)
    expectOneLine(result.stderr)
    expect(result.stderr).toMatch(/^✖ Authentication failed \(HTTP 401\): .* check --api-key or SWITCHBOARD_API_KEY/)
    expect(result.stderr).not.toContain("sk-wrong")
  })

  it("--verbose adds the details, never the key", async () => {
    const result = await run(["models", "--api-key", "sk-wrong", "--verbose"], { env })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("error: AuthenticationError")
    expect(result.stderr).toContain("status: 401")
    expect(result.stderr).toMatch(/requestId: \S+/)
    expect(result.stderr).not.toContain("sk-wrong")
  })

  it("an unknown model says so and where the list is, exit 1", async () => {
    const result = await run(["chat", "Hi", "--model", "gpt-nope"], { env })
    expect(result.code).toBe(1)
    expectOneLine(result.stderr)
    expect(result.stderr).toMatch(/^✖ Unknown model \(HTTP 404\): The model 'gpt-nope' does not exist.*switchboard models/)
  })

  it("a bad --size is a usage error naming the allowed sizes, exit 2, nothing sent", async () => {
    const before = (await chatRequestsAbout("a fox with a bad size")).length
    const result = await run(["image", "a fox with a bad size", "--size", "800x600"], { env })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("--size: \"800x600\" is not one of 1024x1024, 1024x1792, 1792x1024")
    expect((await chatRequestsAbout("a fox with a bad size")).length).toBe(before)
  })

  it("a request the SDK rejects is a usage error, exit 2", async () => {
    const result = await run(["image", "a fox", "-n", "0"], { env })
    expect(result.code).toBe(2)
    expectOneLine(result.stderr)
    expect(result.stderr).toContain("Invalid request, nothing was sent: n must be a positive integer")
  })

  it("an --out directory that cannot be made fails at once with one line", async () => {
    const result = await run(["image", "a fox for proc", "--out", "/proc/nope"], { env })
    expect(result.code).toBe(1)
    expectOneLine(result.stderr)
    expect(result.stderr).toContain("/proc/nope")
  })

  it("a missing --image file is named, exit 2", async () => {
    const result = await run(["chat", "Hi", "--image", "no-such-file.png"], { env, cwd: tempDir("missing") })
    expect(result.code).toBe(2)
    expectOneLine(result.stderr)
    expect(result.stderr).toContain("✖ Cannot use this image: no-such-file.png does not exist")
  })

  it("an unreachable service points at the base URL, exit 1", async () => {
    // Port 9 (discard) on loopback: nothing listens there, the connection is refused at once.
    const result = await run(["models", "--base-url", "http://127.0.0.1:9"], { env })
    expect(result.code).toBe(1)
    expectOneLine(result.stderr)
    expect(result.stderr).toMatch(/^✖ Cannot reach the service: .*check --base-url or SWITCHBOARD_BASE_URL/)
  })

  it("every usage error is one line starting with ✖, exit 2, nothing sent", async () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["teleport"], "Invalid subcommand for switchboard"],
      [["models", "--colour"], "Received unknown argument: '--colour'"],
      [["chat"], "Missing argument <prompt>"],
      [["chat", "usage case", "--max-tokens", "abc"], "--max-tokens: \"abc\" is not a whole number"],
      [["image", "usage case", "-n", "two"], "-n: \"two\" is not a whole number"],
      [["emulator", "--port", "http"], "--port: \"http\" is not a whole number"],
      [["chat", "usage case", "--max-tokens", "0"], "--max-tokens: 0 is not allowed; it must be at least 1"],
      [["emulator", "--port", "99999"], "--port: 99999 is not a port; give 1 to 65535, or 0 for any free port"],
      [["emulator", "--fault", "boom"], "--fault: \"boom\" is not a fault; try 429, 503:retry-after=2"],
      [["emulator", "--fault", "delay"], "--fault: \"delay\": delay needs a duration, e.g. delay=500ms"],
      [["emulator", "--fault", "200"], "--fault: \"200\": a status fault must be from 400 to 599"],
      [["emulator", "--random-fault", "cut-stream"], "--random-fault: \"cut-stream\": cut-stream needs the number of events sent first"],
      [["emulator", "--fault-rate", "2"], "--fault-rate: \"2\" is not a share from 0 to 1"],
      [["emulator", "--fault-rate", "0.5"], "--fault-rate needs at least one --random-fault to pick from"],
      [["emulator", "--random-fault", "reset"], "--random-fault needs --fault-rate"],
      [["emulator", "--no-cors", "--cors-origin", "http://localhost:5173"], "--no-cors and --cors-origin cannot be used together"],
      [["emulator", "--chunk-size", "0"], "--chunk-size: 0 is not allowed; it must be at least 1"],
      [["video", "usage case", "--poll-interval", "0s"], "--poll-interval: the duration must be positive, not \"0s\""],
      [["video", "usage case", "--poll-interval", "soon"], "--poll-interval: \"soon\" is not a duration"],
      [["video", "usage case", "--poll-interval", "1ms"], "--poll-interval: \"1ms\" is too short; it must be at least 100ms"],
      [["worker", "--database", "sqlite:x.sqlite", "--poll-interval", "1ms"], "--poll-interval: \"1ms\" is too short; it must be at least 100ms"],
      [["moderate", "usage case", "--top", "-1"], "--top: -1 is not allowed; it must be at least 0"],
      [["chat", "usage case", "--image", "ftp://example.com/cat.png"], "the ftp: scheme is not supported; give a file, an http(s) URL or a data URI"]
    ]
    await Promise.all(cases.map(async ([args, message]) => {
      const result = await run(args, { env })
      expect(result.code, args.join(" ")).toBe(2)
      expectOneLine(result.stderr)
      expect(result.stderr.startsWith("✖ "), result.stderr).toBe(true)
      expect(result.stderr).toContain(message)
    }))
    expect(await chatRequestsAbout("usage case")).toEqual([])
  })

  it("an image whose type is not recognised gives a hint that works: --media-type", async () => {
    const dir = tempDir("media-type")
    Fs.writeFileSync(Path.join(dir, "fake.jpg"), "not really a JPEG")
    const refused = await run(["chat", "What is this?", "--image", "fake.jpg"], { env, cwd: dir })
    expect(refused.code).toBe(2)
    expectOneLine(refused.stderr)
    expect(refused.stderr).toContain("fake.jpg is not a PNG, JPEG, GIF or WebP image; if it is an image of another type, name it with --media-type")
    const sent = await run(["chat", "What is this?", "--image", "fake.jpg", "--media-type", "image/heic"], { env, cwd: dir })
    expect(sent.code).toBe(0)
    expect(sent.stdout).toContain("Received 1 image: image/heic")
  })
})

describe.concurrent("--help", { timeout: 90_000 }, () => {
  it("--version prints the package's version on one line, and nothing else", async () => {
    const result = await run(["--version"])
    expect(result.code).toBe(0)
    const { version } = JSON.parse(Fs.readFileSync(Path.join(packageDir, "package.json"), "utf8")) as { version: string }
    expect(result.stdout).toBe(`${version}\n`)
    expect(result.stderr).toBe("")
  })

  it("follows the terminal: no ANSI off a terminal even without NO_COLOR, wrapped to COLUMNS", async () => {
    for (const args of [["--help"], ["chat", "--help"], ["image", "-h"], ["emulator", "--help"]]) {
      const result = await run(args, { env: { COLUMNS: "60" }, unset: ["NO_COLOR"] })
      expect(result.code).toBe(0)
      expect(result.stdout).not.toContain("\x1b[")
      for (const line of result.stdout.split("\n")) {
        // A single word longer than the width (a flag's values) may not wrap.
        if (line.trim().includes(" ")) expect(line.length, line).toBeLessThanOrEqual(60)
      }
    }
  })

  it("names the program, marks optional and repeatable flags, shows defaults", async () => {
    const result = await run(["chat", "--help"])
    expect(result.code).toBe(0)
    const usage = result.stdout.slice(result.stdout.indexOf("USAGE"), result.stdout.indexOf("ARGUMENTS"))
    expect(usage).toMatch(/^USAGE\n {2}switchboard chat \[--model text\] \[--image file\|url\]\.\.\./)
    expect(usage).toContain("<prompt>")
    expect(result.stdout).toMatch(/--model text +The chat model \(default: gpt-4o-mini\)/)
    expect(result.stdout).toMatch(/--image file\|url +An image to send .*\n.*\(repeatable\)/)
    expect(result.stdout).not.toContain("A user-defined piece of text")
  })

  it("lists the commands, one line each at 80 columns, also when no command is given", async () => {
    const result = await run([])
    expect(result.stdout).toBe((await run(["--help"])).stdout)
    expect(result.code).toBe(0)
    const commands = result.stdout.slice(result.stdout.indexOf("COMMANDS"), result.stdout.indexOf("OPTIONS"))
    for (const name of ["models", "chat", "image", "video", "embed", "moderate", "emulator", "demo"]) {
      expect(commands).toMatch(new RegExp(`\n {2}${name} +\\S`))
    }
    expect(Math.max(...result.stdout.split("\n").map((line) => line.length))).toBeLessThanOrEqual(80)
  })
})

describe.concurrent("switchboard image", { timeout: 90_000 }, () => {
  it("saves the images and prints their paths", async () => {
    const dir = tempDir("image")
    const result = await run(["image", "A fox in fresh snow", "--n", "2", "--size", "1792x1024", "--quality", "hd", "--out", "pictures"], {
      env,
      cwd: dir
    })
    expect(result.code).toBe(0)
    const paths = lines(result.stdout)
    expect(paths).toHaveLength(2)
    for (const [i, path] of paths.entries()) {
      expect(path).toMatch(new RegExp(`^pictures/a-fox-in-fresh-snow-\\d{8}-\\d{6}-${i + 1}\\.png$`))
      expect(pngSize(Path.join(dir, path))).toEqual([1792, 1024])
    }
  })

  it("two runs with the same prompt at the same time keep both images", async () => {
    const dir = tempDir("same-prompt")
    const [a, b] = await Promise.all([run(["image", "The same fox"], { env, cwd: dir }), run(["image", "The same fox"], { env, cwd: dir })])
    expect([a?.code, b?.code]).toEqual([0, 0])
    const paths = [...lines(a!.stdout), ...lines(b!.stdout)]
    expect(new Set(paths).size).toBe(2)
    expect(Fs.readdirSync(dir).filter((name) => name.endsWith(".png"))).toHaveLength(2)
    for (const path of paths) expect(pngSize(Path.join(dir, path))).toEqual([1024, 1024])
  })

  it("transforms an image with --from", async () => {
    const dir = tempDir("from")
    Fs.writeFileSync(Path.join(dir, "source.png"), tinyPng)
    const result = await run(["image", "The source as a sketch", "--from", "source.png"], { env, cwd: dir })
    expect(result.code).toBe(0)
    const [path] = lines(result.stdout)
    expect(pngSize(Path.join(dir, path!))).toEqual([1024, 1024])
    const [sent] = await chatRequestsAbout("The source as a sketch")
    expect(JSON.stringify(sent?.body)).toContain(`data:image/png;base64,${tinyPng.toString("base64")}`)
  })
})

describe.concurrent("switchboard embed and moderate", { timeout: 90_000 }, () => {
  it("prints one text's vector", async () => {
    const result = await run(["embed", "hello world"], { env })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^1 vector of \d+ dimensions\n\[-?\d\.\d{4}, .* more\]\n$/)
  })

  it("prints the similarity of every pair, most similar first", async () => {
    const result = await run(["embed", "The cat sat on the mat.", "A cat was sitting on a mat.", "Revenue grew by 4%."], { env })
    expect(result.code).toBe(0)
    const rows = lines(result.stdout).slice(1)
    expect(rows).toHaveLength(3)
    const scores = rows.map((row) => Number(row.trim().split(/\s+/)[0]))
    expect([...scores].sort((a, b) => b - a)).toEqual(scores)
    expect(rows[0]).toMatch(/"The cat sat on the mat\."\s+↔ {2}"A cat was sitting on a mat\."/)
  })

  it("prints vectors and similarities as JSON", async () => {
    const result = await run(["embed", "a", "b", "--json"], { env })
    expect(result.code).toBe(0)
    const json = JSON.parse(result.stdout) as { vectors: ReadonlyArray<ReadonlyArray<number>>; similarities: ReadonlyArray<unknown> }
    expect(json.vectors).toHaveLength(2)
    expect(json.similarities).toHaveLength(1)
  })

  it("says whether a text is flagged, with the top scores", async () => {
    const flagged = await run(["moderate", "I will attack them tonight"], { env })
    expect(flagged.code).toBe(0)
    expect(lines(flagged.stdout)).toEqual(["✖ flagged (violence)", "  violence    0.600", "  harassment  0.001", "  hate        0.001"])
    const fine = await run(["moderate", "Have a lovely day", "--top", "1"], { env })
    expect(lines(fine.stdout)).toEqual(["✔ not flagged", "  harassment  0.001"])
  })
})

/** The task records of a journal directory (one file per task). */
const records = (journal: string) =>
  Fs.existsSync(journal) ? Fs.readdirSync(journal).filter((name) => name.startsWith("task-") && name.endsWith(".json")) : []

const writeRecord = (journal: string, entry: Record<string, unknown>) => {
  Fs.mkdirSync(journal, { recursive: true })
  Fs.writeFileSync(Path.join(journal, `task-${String(entry["taskId"])}.json`), JSON.stringify(entry))
}

describe.concurrent("switchboard video", { timeout: 90_000 }, () => {
  it("submits, shows progress, saves the video, and only then drops the task from the journal", async () => {
    const dir = tempDir("video")
    const result = await run(["video", "A paper boat", "--poll-interval", "100ms", "--out", "videos"], { env, cwd: dir })
    expect(result.code).toBe(0)
    const [path] = lines(result.stdout)
    expect(path).toMatch(/^videos\/task_\w+\.mp4$/)
    const bytes = Fs.readFileSync(Path.join(dir, path!))
    expect(bytes.subarray(4, 8).toString("latin1")).toBe("ftyp")
    // Off a terminal the progress is one plain line per change.
    expect(result.stderr).toMatch(/Submitted video task task_\w+ \(video-1\)/)
    expect(lines(result.stderr)).toEqual(expect.arrayContaining(["  queued 0%", "  processing 50%", "  succeed 100%"]))
    expect(records(Path.join(dir, ".switchboard/tasks"))).toEqual([])
    // The long form does the same.
    const long = await run(["video", "generate", "A paper boat", "--poll-interval", "100ms", "--out", "videos"], { env, cwd: dir })
    expect(long.code).toBe(0)
    expect(lines(long.stdout)[0]).toMatch(/^videos\/task_\w+\.mp4$/)
  })

  it("a task id that is a path: the video lands inside --out under a safe name, and replaces nothing", async () => {
    const service = await videoServiceNaming("../victim")
    try {
      const root = tempDir("escape")
      const out = Path.join(root, "out")
      Fs.mkdirSync(out)
      Fs.writeFileSync(Path.join(root, "victim.mp4"), "mine")
      Fs.writeFileSync(Path.join(out, "victim.mp4"), "mine too")
      const result = await run(["video", "a fox", "--poll-interval", "100ms", "--out", "out"], {
        env: { SWITCHBOARD_BASE_URL: service.url, SWITCHBOARD_API_KEY: "sk-test" },
        cwd: root
      })
      expect(result.code).toBe(0)
      expect(lines(result.stdout)).toEqual([Path.join("out", "victim-2.mp4")])
      expect(Fs.readFileSync(Path.join(root, "victim.mp4"), "utf8")).toBe("mine")
      expect(Fs.readFileSync(Path.join(out, "victim.mp4"), "utf8")).toBe("mine too")
      expect(Fs.readFileSync(Path.join(out, "victim-2.mp4")).subarray(4, 8).toString("latin1")).toBe("ftyp")
      expect(Fs.readdirSync(root).sort()).toEqual([".switchboard", "out", "victim.mp4"])
    } finally {
      await service.close()
    }
  })

  it("a failed task is exit 1 with the reason", async () => {
    const result = await run(["video", "A boat that will fail", "--poll-interval", "100ms"], { env, cwd: tempDir("fail") })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("✖ Video task")
    expect(result.stderr).toContain("failed: The emulator was asked to fail this task.")
  })

  it("each subcommand has its own help; a missing task id is a usage error", async () => {
    const help = await run(["video", "--help"], { env })
    expect(help.code).toBe(0)
    // Listed in the order the command gives them: the common case first.
    const listed = help.stdout.split("COMMANDS\n")[1]!.split("\n\n")[0]!.match(/^ {2}\S+/gm)!.map((name) => name.trim())
    expect(listed).toEqual(["generate", "resume", "status", "forget"])
    const resumeHelp = await run(["video", "resume", "--help"], { env })
    expect(resumeHelp.stdout).toContain("Finish every task earlier runs left in the journal")
    expect(resumeHelp.stdout).not.toContain("--from")
    const noId = await run(["video", "status"], { env })
    expect(noId.code).toBe(2)
  })

  it("a model named like a chat or image model is refused before anything is paid for", async () => {
    const prompt = `A boat for the wrong model ${Date.now()}`
    for (const model of ["gpt-4o-mini", "image2"]) {
      const result = await run(["video", prompt, "--model", model], { env, cwd: tempDir("model") })
      expect(result.code).toBe(2)
      expect(result.stderr).toContain(`--model ${model} is not a video model`)
      expectOneLine(result.stderr)
    }
    expect(await chatRequestsAbout(prompt)).toHaveLength(0)
  })

  it("status of an unknown task is a 404 asking whether --model is a video model, exit 1", async () => {
    const result = await run(["video", "status", "task_unknown"], { env })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("The service does not know video task task_unknown (HTTP 404): is --model a video model?")
  })

  it("Ctrl-C leaves the task in the journal; resume finishes that same task, submitted once, saved where the first run was told", async () => {
    const dir = tempDir("resume")
    const journal = Path.join(dir, "journal")
    const prompt = `A slow pan over a harbour ${Path.basename(dir)}`
    // A poll interval of an hour: after the first status call the process waits until interrupted.
    const first = start(["video", prompt, "--journal", journal, "--poll-interval", "1h", "--out", "videos"], { env, cwd: dir })
    const submitted = await first.waitFor(/Submitted video task (task_\w+)/)
    const taskId = /Submitted video task (task_\w+)/.exec(submitted)![1]!
    expect(records(journal)).toEqual([`task-${taskId}.json`])
    await first.waitFor(/queued/)
    first.signal("SIGINT")
    const interrupted = await first.exited
    expect(interrupted.code).toBe(130)
    expect(interrupted.stderr).toContain(`Interrupted. Task ${taskId} is still in the journal ${journal}`)
    expect(interrupted.stderr).toContain(`switchboard video resume --journal ${JSON.stringify(journal)}`)
    expect(records(journal)).toEqual([`task-${taskId}.json`])

    const status = await run(["video", "status", taskId], { env })
    expect(status.code).toBe(0)
    expect(status.stdout).toMatch(new RegExp(`^${taskId}  processing  \\d+%\\n$`))

    // The environment variable names the journal as well as the flag does;
    // the video goes to the first run's --out, not to this run's directory.
    const resumed = await run(["video", "resume", "--poll-interval", "100ms"], {
      env: { ...env, SWITCHBOARD_JOURNAL_DIR: journal },
      cwd: dir
    })
    expect(resumed.code).toBe(0)
    expect(resumed.stderr).toContain(`Resuming 1 unfinished video task from ${journal}`)
    expect(lines(resumed.stdout)).toEqual([`videos/${taskId}.mp4`])
    expect(Fs.existsSync(Path.join(dir, "videos", `${taskId}.mp4`))).toBe(true)
    expect(records(journal)).toEqual([])
    expect(await chatRequestsAbout(prompt)).toHaveLength(1)

    const again = await run(["video", "resume", "--journal", journal], { env, cwd: dir })
    expect(again.code).toBe(0)
    expect(again.stderr).toContain(`No unfinished video tasks in ${journal}.`)
  })

  it("resume saves a task that succeeded before its run stopped, from the URL in the journal, without polling", async () => {
    const dir = tempDir("saved-url")
    const journal = Path.join(dir, "journal")
    const out = Path.join(dir, "first-out")
    const taskId = `task_done_${Date.now().toString(36)}`
    writeRecord(journal, { taskId, model: "video-1", prompt: "done", submittedAt: 0, videoUrl: `${emulator.url}/files/${taskId}.mp4`, output: out })
    const before = (await requests()).filter((r) => r.path === "/v1/chat/task/status" && JSON.stringify(r.body).includes(taskId))
    const resumed = await run(["video", "resume", "--journal", journal], { env, cwd: dir })
    expect(resumed.code).toBe(0)
    expect(Fs.readFileSync(Path.join(out, `${taskId}.mp4`)).subarray(4, 8).toString("latin1")).toBe("ftyp")
    const after = (await requests()).filter((r) => r.path === "/v1/chat/task/status" && JSON.stringify(r.body).includes(taskId))
    expect(after.length).toBe(before.length)
    expect(records(journal)).toEqual([])
  })

  it("resume drops a task the service answers 404 for and says why; a bad record is set aside; forget drops a task", async () => {
    const dir = tempDir("forget")
    const journal = Path.join(dir, "journal")
    writeRecord(journal, { taskId: "chatcmpl-gone", model: "gpt-4o-mini", prompt: "lost", submittedAt: 0 })
    Fs.writeFileSync(Path.join(journal, "task-broken.json"), "{ not json")
    const resumed = await run(["video", "resume", "--journal", journal], { env })
    expect(resumed.code).toBe(1)
    expect(resumed.stderr).toContain("gpt-4o-mini does not look like a video model")
    expect(resumed.stderr).toContain("A journal record could not be read")
    expect(records(journal)).toEqual([])
    expect(Fs.readdirSync(Path.join(journal, "quarantine"))).toHaveLength(1)
    // Nothing left: the next resume succeeds.
    expect((await run(["video", "resume", "--journal", journal], { env })).code).toBe(0)

    writeRecord(journal, { taskId: "task_kept", model: "video-1", prompt: "kept", submittedAt: 0 })
    const forgot = await run(["video", "forget", "task_kept", "--journal", journal], { env })
    expect(forgot.code).toBe(0)
    expect(records(journal)).toEqual([])
    const unknown = await run(["video", "forget", "task_kept", "--journal", journal], { env })
    expect(unknown.code).toBe(2)
  })
})

describe("switchboard serve", { timeout: 90_000 }, () => {
  it("serves the built page and its API on a free port until Ctrl-C, which exits 0", async () => {
    const server = start(["serve", "--port", "0"], { env: {} })
    const url = /chat page on (http:\/\/127\.0\.0\.1:\d+)/.exec(await server.waitFor(/Ctrl-C stops it/, "stdout"))![1]!
    expect(server.stdout()).toContain("against the embedded emulator")
    const page = await fetch(`${url}/`)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(await page.text()).toContain("<script type=\"module\" src=\"/page.js\">")
    const script = await fetch(`${url}/page.js`)
    expect([script.status, script.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"])
    expect((await script.text()).length).toBeGreaterThan(1000)
    const bad = await fetch(`${url}/api/chat`, { method: "POST", body: "{\"id\":1}" })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({ error: { field: "id", message: "expected a string, got 1" } })
    server.signal("SIGINT")
    expect((await server.exited).code).toBe(0)
  })
})

describe.concurrent("switchboard emulator", { timeout: 90_000 }, () => {
  it("serves on a free port until Ctrl-C, which exits 0", async () => {
    const server = start(["emulator", "--port", "0", "--api-key", "sk-local"])
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(await server.waitFor(/SWITCHBOARD_API_KEY=/, "stdout"))![1]!
    expect(server.stdout()).toContain(`export SWITCHBOARD_BASE_URL=${url} SWITCHBOARD_API_KEY=sk-local`)
    const models = await run(["models"], { env: { SWITCHBOARD_BASE_URL: url, SWITCHBOARD_API_KEY: "sk-local" } })
    expect(models.code).toBe(0)
    expect(models.stdout).toContain("video-1")
    server.signal("SIGINT")
    expect((await server.exited).code).toBe(0)
  })

  it("injects the faults and modes its flags ask for", async () => {
    const server = start([
      "emulator", "--port", "0", "--minimal", "--chunk-size", "50",
      "--fault", "503:retry-after=7", "--fault", "429", "--fault-path", "/v1/models",
      "--random-fault", "reset", "--fault-rate", "0", "--fault-seed", "3"
    ])
    const out = await server.waitFor(/SWITCHBOARD_API_KEY=/, "stdout")
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(out)![1]!
    expect(out).toContain("Modes: minimal replies; stream chunks of 50 characters.")
    expect(out).toContain("Faults: the next 2 requests get a scripted fault; 0% of requests a random one; only on /v1/models.")
    const get = (path: string) => fetch(`${url}${path}`, { headers: { authorization: "Bearer sk-emulator" } })
    const first = await get("/v1/models")
    expect([first.status, first.headers.get("retry-after")]).toEqual([503, "7"])
    expect(await first.json()).toMatchObject({ error: { message: "Injected fault: 503" } })
    expect((await get("/v1/models")).status).toBe(429)
    const third = await get("/v1/models")
    expect(await third.json()).toEqual({ data: expect.arrayContaining([{ id: "gpt-4o-mini" }]) })
    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer sk-emulator", "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "Hi" }] })
    }).then((r) => r.text())
    const pieces = chat.split("\n\n").filter((e) => e.startsWith("data: {")).map((e) =>
      (JSON.parse(e.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? ""
    ).filter((piece) => piece !== "")
    expect(pieces[0]).toHaveLength(50)
    expect(pieces.every((piece) => piece.length <= 50)).toBe(true)
    server.signal("SIGINT")
    expect((await server.exited).code).toBe(0)
  })
})

describe("switchboard demo", { timeout: 90_000 }, () => {
  it("walks through every step against the embedded emulator and exits 0", async () => {
    const out = tempDir("demo")
    const result = await run(["demo", "--out", out])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    const headers = [
      "[1/11] Models",
      "[2/11] Chat",
      "[3/11] Chat, streamed",
      "[4/11] Agent with two tools",
      "[5/11] Image",
      "[6/11] Chat with an image",
      "[7/11] Image to image",
      "[8/11] Video",
      "[9/11] Embeddings",
      "[10/11] Moderation",
      "[11/11] Typed errors"
    ]
    let at = 0
    for (const header of headers) {
      const found = result.stdout.indexOf(header, at)
      expect(found, header).toBeGreaterThan(-1)
      at = found
    }
    expect(result.stdout).toContain("the embedded emulator at http://127.0.0.1:")
    // Token usage, of a plain and of a streamed completion.
    expect(result.stdout).toMatch(/\[2\/11\] Chat [^]*\n {2}stop; \d+ prompt \+ \d+ completion = \d+ tokens\n/)
    expect(result.stdout).toMatch(/\[3\/11\] Chat, streamed[^]*\n {2}stop; \d+ prompt \+ \d+ completion = \d+ tokens\n/)
    expect(result.stdout).toMatch(/Received 1 image: image\/png \d+ bytes \(data URI\)/)
    expect(result.stdout).toMatch(/→ get_weather\(.*\n.*→ get_local_time\(/)
    expect(result.stdout).toMatch(/2 calls ran side by side/)
    expect(result.stdout).toContain("InvalidRequestError (field n, nothing sent): n must be a positive integer")
    expect(lines(result.stdout).at(-2)).toMatch(new RegExp(`^✔ Demo finished: 11 steps in .* against the embedded emulator; files in ${out}$`))
    expect(lines(result.stdout).at(-1)).toBe("Next, a chat page with this agent in your browser: pnpm serve, then open http://127.0.0.1:3000")
    expect(pngSize(Path.join(out, "fox-1.png"))).toEqual([1024, 1024])
    expect(pngSize(Path.join(out, "fox-sketch-1.png"))).toEqual([1792, 1024])
    expect(Fs.readdirSync(out).some((name) => /^task_\w+\.mp4$/.test(name))).toBe(true)
  })

  it("uses the service when SWITCHBOARD_BASE_URL and SWITCHBOARD_API_KEY are set, and stops at a failing step", async () => {
    // The test's emulator stands in for the real service; a wrong key makes the first step fail.
    const result = await run(["demo", "--out", tempDir("demo-service")], {
      env: { SWITCHBOARD_BASE_URL: emulator.url, SWITCHBOARD_API_KEY: "sk-wrong" }
    })
    expect(result.code).toBe(1)
    expect(result.stdout).toContain(`Service: ${emulator.url}`)
    expectOneLine(result.stderr)
    expect(result.stderr.trim()).toMatch(/^✖ Demo stopped at \[1\/11\] Models: Authentication failed \(HTTP 401\)/)
  })

  it("with only SWITCHBOARD_BASE_URL set, says the key is missing and that it uses the emulator", async () => {
    const result = await run(["demo", "--out", tempDir("demo-half")], { env: { SWITCHBOARD_BASE_URL: "http://127.0.0.1:9" } })
    expect(result.code).toBe(0)
    expect(lines(result.stdout)[1]).toBe(
      "No SWITCHBOARD_API_KEY (or --api-key) is set, so the service http://127.0.0.1:9 is not used: the demo runs against the embedded emulator."
    )
    expect(result.stdout).toContain("Service: the embedded emulator at http://127.0.0.1:")
  })
})

describe.concurrent("switchboard video --database", { timeout: 120_000 }, () => {
  it("runs the task as a workflow on a sqlite file: one task per key, found again by resume --key", async () => {
    const dir = tempDir("video-db")
    const args = ["--database", "sqlite:tasks.sqlite", "--poll-interval", "100ms", "--out", "videos"]
    const first = await run(["video", "A durable paper boat", "--key", "boat-1", ...args], { env, cwd: dir })
    expect(first.code).toBe(0)
    const path = lines(first.stdout)[0]!
    expect(path).toMatch(/^videos\/task_\w+\.mp4$/)
    expect(Fs.existsSync(Path.join(dir, path))).toBe(true)
    expect(first.stderr).toMatch(/Started video workflow boat-1/)

    const again = await run(["video", "A durable paper boat", "--key", "boat-1", ...args], { env, cwd: dir })
    expect(lines(again.stdout)[0]).toBe(path)
    const resumed = await run(["video", "resume", "--key", "boat-1", ...args], { env, cwd: dir })
    expect(resumed.code).toBe(0)
    expect(lines(resumed.stdout)[0]).toBe(path)
    expect(await chatRequestsAbout("A durable paper boat")).toHaveLength(1)
  })

  it("image-to-video with --from: the first frame goes into the stored request; the key printed finds it again", async () => {
    const dir = tempDir("video-db-from")
    Fs.writeFileSync(Path.join(dir, "frame.png"), tinyPng)
    const args = ["--database", "sqlite:tasks.sqlite", "--poll-interval", "100ms", "--out", "videos"]
    const first = await run(["video", "A kite from its first frame", "--from", "frame.png", ...args], { env, cwd: dir })
    expect(first.code).toBe(0)
    expect(Fs.existsSync(Path.join(dir, lines(first.stdout)[0]!))).toBe(true)
    const [submission] = await chatRequestsAbout("A kite from its first frame")
    expect(JSON.stringify(submission?.body)).toContain(`data:image/png;base64,${tinyPng.toString("base64")}`)
    // The default key is a short digest of the request, image included.
    const key = /Started video workflow (\S+);/.exec(first.stderr)?.[1]
    expect(key).toMatch(/^video-[0-9a-f]{24}$/)
    const resumed = await run(["video", "resume", "--key", key!, ...args], { env, cwd: dir })
    expect(lines(resumed.stdout)[0]).toBe(lines(first.stdout)[0])
    expect(await chatRequestsAbout("A kite from its first frame")).toHaveLength(1)
  })

  it("a database that refuses the connection: one ✖ line with its address, never its password; exit 1", async () => {
    const port = await refusedPort()
    for (const args of [["video", "A fox", "--database"], ["worker", "--port", "24998", "--database"]]) {
      const result = await run([...args, `postgres://alice:pw-secret@127.0.0.1:${port}/fleet`], { env })
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(new RegExp(`^✖ Cannot use the database 127\\.0\\.0\\.1:${port}/fleet: .*ECONNREFUSED`))
      expect(result.stderr + result.stdout).not.toContain("pw-secret")
      expectOneLine(result.stderr)
    }
  })

  it("a --database of another scheme: a usage error naming the flag, exit 2, nothing sent", async () => {
    const result = await run(["video", "A fox in the rain", "--database", "mysql://db/fleet"], { env })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^✖ --database must be a sqlite file .* not a mysql:\/\/ URL/)
    expectOneLine(result.stderr)
    expect(await chatRequestsAbout("A fox in the rain")).toHaveLength(0)
  })

  it("says so when no workflow has the key", async () => {
    const dir = tempDir("video-db-missing")
    const result = await run(["video", "resume", "--key", "nothing-here", "--database", "sqlite:tasks.sqlite"], { env, cwd: dir })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/No video workflow with key nothing-here/)
  })
})

describe.concurrent("switchboard worker", { timeout: 120_000 }, () => {
  it("runs on a sqlite file until Ctrl-C, then exits 0", async () => {
    const dir = tempDir("worker")
    const worker = start(["worker", "--database", "sqlite:tasks.sqlite"], { env, cwd: dir })
    await worker.waitFor(/Switchboard worker running video workflows stored in tasks\.sqlite/, "stdout")
    worker.signal("SIGINT")
    const exited = await worker.exited
    expect(exited.code).toBe(0)
    expect(Fs.existsSync(Path.join(dir, "tasks.sqlite"))).toBe(true)
  })

  it("refuses a port in the ephemeral range, naming the flag", async () => {
    const result = await run(["worker", "--database", "postgres://nobody@127.0.0.1:1/none", "--port", "40000"], { env })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/port/)
    expect(result.stderr).toMatch(/32768–60999/)
    expectOneLine(result.stderr)
  })
})

describe("switchboard worker: the database's password stays out of argv", { timeout: 180_000 }, () => {
  // A Postgres that asks for the password: a worker that connects was given it.
  const password = "pw-Kq7-secret"
  let postgres: Postgres
  beforeAll(() => {
    postgres = startPostgres(25443, { password })
  })
  afterAll(async () => {
    await stopAll()
    postgres?.stop()
  })

  /** Starts a worker, waits until it runs, checks its argv and output hold no password, stops it. */
  const serves = async (args: ReadonlyArray<string>, more: Record<string, string>, name: string) => {
    const worker = start(["worker", "--port", "24158", ...args], { env: { ...env, ...more } })
    const stdout = await worker.waitFor(/Ctrl-C stops it/, "stdout")
    expect(stdout).toContain(`on Postgres 127.0.0.1:25443/${name}, reachable`)
    const argv = Fs.readFileSync(`/proc/${worker.pid}/cmdline`, "utf8").split("\0")
    expect(argv).toContain("worker")
    expect(argv.join(" ")).not.toContain(password)
    worker.signal("SIGINT")
    const exited = await worker.exited
    expect(exited.code).toBe(0)
    expect(exited.stdout + exited.stderr).not.toContain(password)
  }

  it("from $SWITCHBOARD_DATABASE_URL: the worker connects, the password is in neither /proc/<pid>/cmdline nor its output", async () => {
    await serves([], { SWITCHBOARD_DATABASE_URL: postgres.database("secret_env") }, "secret_env")
  })

  it("from --database-file (its first line): the worker connects, the password is in neither /proc/<pid>/cmdline nor its output", async () => {
    const file = Path.join(tempDir("database-file"), "database-url")
    Fs.writeFileSync(file, `\n${postgres.database("secret_file")}\n`, { mode: 0o600 })
    // The flag wins over the variable.
    await serves(["--database-file", file], { SWITCHBOARD_DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" }, "secret_file")
  })

  it("a wrong password: one ✖ line with the address, never the password; exit 1", async () => {
    const url = postgres.database("secret_wrong").replace(encodeURIComponent(password), "pw-Wrong-9z")
    const result = await run(["worker", "--port", "24159"], { env: { ...env, SWITCHBOARD_DATABASE_URL: url } })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^✖ Cannot use the database 127\.0\.0\.1:25443\/secret_wrong: .*password authentication failed/)
    expect(result.stderr + result.stdout).not.toMatch(/pw-Wrong-9z|pw-Kq7-secret/)
    expectOneLine(result.stderr)
  })
})

describe.concurrent("switchboard worker: where the database is given", { timeout: 60_000 }, () => {
  it("--help names --database-file and $SWITCHBOARD_DATABASE_URL", async () => {
    const help = await run(["worker", "--help"], { env })
    expect(help.stdout).toContain("--database-file")
    expect(help.stdout).toContain("$SWITCHBOARD_DATABASE_URL")
  })

  it.each([
    [[], /^✖ No database: pass --database <url> or --database-file <path>, or set SWITCHBOARD_DATABASE_URL$/],
    [["--database", "sqlite:a.sqlite", "--database-file", "url.txt"], /^✖ --database and --database-file give the database twice: pass one$/],
    [["--database-file", "/nonexistent/url.txt"], /^✖ --database-file \/nonexistent\/url\.txt cannot be read/],
    [["--database-file", "/dev/null"], /^✖ --database-file \/dev\/null is empty/]
  ])("%j: one ✖ line naming the flags, exit 2", async (flags, message) => {
    const result = await run(["worker", ...flags], { env, unset: ["SWITCHBOARD_DATABASE_URL"] })
    expect(result.code).toBe(2)
    expect(result.stderr.trim()).toMatch(message)
    expectOneLine(result.stderr)
  })

  it("a --database-file past 64 KiB (a wrong file, /dev/zero) is a usage error, and no more of it is read", async () => {
    const big = Path.join(tempDir("big-database-file"), "url.txt")
    Fs.writeFileSync(big, `postgres://nobody@127.0.0.1:1/none\n${"#".repeat(1024 * 1024)}\n`)
    for (const file of [big, "/dev/zero"]) {
      const result = await run(["worker", "--database-file", file], { env, unset: ["SWITCHBOARD_DATABASE_URL"] })
      expect([result.code, result.stderr.trim()]).toEqual([2, `✖ --database-file ${file} is larger than 64 KiB: write the value alone on its first line`])
    }
  })

  it("video takes --database-file too: the task runs as a workflow", async () => {
    const dir = tempDir("video-database-file")
    Fs.writeFileSync(Path.join(dir, "url.txt"), "sqlite:tasks.sqlite\n")
    const result = await run(["video", "A heron by file", "--database-file", "url.txt", "--poll-interval", "100ms"], { env, cwd: dir })
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/Started video workflow/)
    expect(Fs.existsSync(Path.join(dir, "tasks.sqlite"))).toBe(true)
  })
})

describe.concurrent("switchboard worker: failover flags", { timeout: 60_000 }, () => {
  // Checked before the database is opened: a refused port shows nothing is asked of it.
  const refused = async () => `postgres://nobody@127.0.0.1:${await refusedPort()}/none`
  it.each([
    [["--shard-lock-expiration", "2s"], /^✖ --shard-lock-expiration must be at least 3s, got 2s$/],
    [["--shard-lock-expiration", "12s", "--shard-lock-refresh", "5s"], /^✖ --shard-lock-refresh must be at most a third of the shard lock expiration \(12s\): at most 4s, got 5s$/],
    [["--shard-lock-refresh", "7s"], /^✖ --shard-lock-refresh must be at most a third of the shard lock expiration \(20s\): at most 6\.667s, got 7s$/],
    [["--health-check-interval", "0s"], /^✖ --health-check-interval: the duration must be positive, not "0s"/],
    [["--shard-lock-expiration", "soon"], /^✖ --shard-lock-expiration: "soon" is not a duration/],
    [["--log-level", "loud"], /^✖ --log-level: "loud" is not one of debug, info, warning, error, none$/]
  ])("%j: one ✖ line naming the flag, exit 2", async (flags, message) => {
    const result = await run(["worker", "--database", await refused(), "--port", "24990", ...flags], { env })
    expect(result.code).toBe(2)
    expect(result.stderr.trim()).toMatch(message)
    expectOneLine(result.stderr)
    expect(result.stdout).toBe("")
  })
})

describe("switchboard worker on Postgres", { timeout: 180_000 }, () => {
  let postgres: Postgres
  beforeAll(() => {
    postgres = startPostgres(25441, { logStatements: true })
  })
  afterAll(async () => {
    await stopAll()
    postgres?.stop()
  })

  it("the failover flags reach effect/cluster: the lock session ends after --shard-lock-expiration idle; the settings are printed", async () => {
    const url = postgres.database("flags")
    const worker = start(
      ["worker", "--database", url, "--port", "24151", "--shard-lock-expiration", "12s", "--shard-lock-refresh", "3s", "--health-check-interval", "2s"],
      { env }
    )
    const stdout = await worker.waitFor(/Ctrl-C stops it/, "stdout")
    expect(stdout).toContain("Failover: runners pinged every 2s; shard locks expire after 12s, refreshed every 3s")
    // effect/cluster's SqlRunnerStorage sets its lock session's idle_session_timeout to
    // shardLockExpiration, in milliseconds, when its layer is built (before the line above).
    expect(postgres.log()).toMatch(/set_config\(name, '12000', false\) FROM pg_settings WHERE name = 'idle_session_timeout'/)
    const defaults = start(["worker", "--database", postgres.database("defaults"), "--port", "24152"], { env })
    expect(await defaults.waitFor(/Ctrl-C stops it/, "stdout")).toContain(
      "Failover: runners pinged every 5s; shard locks expire after 20s, refreshed every 6s"
    )
    expect(postgres.log()).toMatch(/set_config\(name, '20000', false\)/)
    worker.signal("SIGINT")
    defaults.signal("SIGINT")
    expect((await worker.exited).code).toBe(0)
    expect((await defaults.exited).code).toBe(0)
  })

  it("a SIGKILLed worker's tasks are taken over by the other: each task it was polling is polled again, by the survivor", async () => {
    // A service of its own, reached by each worker under its own path, so
    // that every status call says which worker made it. Tasks never end.
    const calls: Array<{ readonly worker: string; readonly taskId: string }> = []
    let submitted = 0
    const service = Http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        response.writeHead(200, { "content-type": "application/json" })
        const [, worker, ...rest] = (request.url ?? "").split("/")
        if (rest.join("/") === "v1/chat/task/status") {
          const taskId = String(JSON.parse(body).task_id)
          calls.push({ worker: worker!, taskId })
          return response.end(JSON.stringify({ task_id: taskId, status: "processing", progress: 50 }))
        }
        response.end(JSON.stringify({ id: `task_${++submitted}`, choices: [{ index: 0, message: { role: "assistant", content: "" } }] }))
      })
    })
    await new Promise<void>((resolve) => service.listen(0, "127.0.0.1", resolve))
    const base = `http://127.0.0.1:${(service.address() as Net.AddressInfo).port}`
    const seen = (done: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => (done() ? resolve() : void setTimeout(check, 100))
        check()
      })
    try {
      const url = postgres.database("takeover")
      const worker = (name: string, port: number) =>
        start(["worker", "--database", url, "--port", String(port), "--poll-interval", "1s"], {
          env: { SWITCHBOARD_BASE_URL: `${base}/${name}`, SWITCHBOARD_API_KEY: "sk-test" }
        })
      const a = worker("a", 24155)
      await a.waitFor(/Ctrl-C stops it/, "stdout")
      // 12 tasks started from a client of the fleet; a alone holds every shard.
      const client = ManagedRuntime.make(Cluster.layerClient({ database: { _tag: "Postgres", url: Redacted.make(url) } }))
      for (let i = 0; i < 12; i++) await client.runPromise(VideoWorkflow.start({ model: "video-1", prompt: `takeover ${i}` }, { key: `takeover-${i}` }))
      await client.dispose()
      await seen(() => new Set(calls.map((c) => c.taskId)).size === 12)
      const b = worker("b", 24156)
      await b.waitFor(/Ctrl-C stops it/, "stdout")
      // The fleet settled (b took its share of the shards, and with them some
      // tasks); then the tasks a still polls are the ones it owns.
      const joined = calls.length
      await seen(() => new Set(calls.slice(joined).filter((c) => c.worker === "b").map((c) => c.taskId)).size > 0)
      const settled = calls.length
      await seen(() => new Set(calls.slice(settled).map((c) => c.taskId)).size === 12)
      const owned = new Set(calls.slice(settled).filter((c) => c.worker === "a").map((c) => c.taskId))
      // Never vacuous: a owns tasks when it is killed.
      expect(owned.size).toBeGreaterThan(0)
      a.signal("SIGKILL")
      expect((await a.exited).signal).toBe("SIGKILL")
      const killed = calls.length
      // Every task, a's included, polled by b after the kill.
      await seen(() => new Set(calls.slice(killed).filter((c) => c.worker === "b").map((c) => c.taskId)).size === 12)
      expect(new Set(calls.slice(killed).map((c) => c.taskId))).toEqual(new Set(Array.from({ length: 12 }, (_, i) => `task_${i + 1}`)))
      b.signal("SIGINT")
      expect((await b.exited).code).toBe(0)
    } finally {
      service.closeAllConnections()
      service.close()
    }
  })

  it("quiet: the cluster's log lines go to stderr from --log-level up (warning by default), no driver warning; stdout is the worker's own", async () => {
    const url = postgres.database("quiet")
    const quiet = start(["worker", "--database", url, "--port", "24153"], { env })
    const chatty = start(["worker", "--database", url, "--port", "24154", "--log-level", "info"], { env })
    await quiet.waitFor(/Ctrl-C stops it/, "stdout")
    await chatty.waitFor(/Ctrl-C stops it/, "stdout")
    // A task through the fleet, so both runners have used the database under load of a workflow.
    const dir = tempDir("worker-quiet")
    const video = await run(["video", "A quiet fleet", "--database", url, "--poll-interval", "100ms", "--out", "videos"], { env, cwd: dir })
    expect(video.code).toBe(0)
    expect(lines(video.stdout)).toEqual([expect.stringMatching(/^videos\/task_\w+\.mp4$/)])
    expect(video.stderr).not.toMatch(/INFO|WARN|DEBUG|DeprecationWarning/)
    quiet.signal("SIGINT")
    chatty.signal("SIGINT")
    const [q, c] = [await quiet.exited, await chatty.exited]
    for (const exited of [q, c]) {
      expect(exited.code).toBe(0)
      expect(lines(exited.stdout)).toEqual([
        expect.stringMatching(/^Switchboard worker running video workflows on Postgres 127\.0\.0\.1:25441\/quiet, reachable by other runners at 127\.0\.0\.1:2415[34]$/),
        "Failover: runners pinged every 5s; shard locks expire after 20s, refreshed every 6s",
        "Ctrl-C stops it; unfinished workflows go on when a worker runs again."
      ])
      expect(exited.stderr).not.toMatch(/DeprecationWarning|client\.query\(\)/)
    }
    expect(q.stderr).not.toMatch(/\b(INFO|DEBUG)\b/)
    expect(c.stderr).toMatch(/INFO .*Listening on: 127\.0\.0\.1:24154/)
    expect(c.stderr).not.toMatch(/\bDEBUG\b/)
  })
})
