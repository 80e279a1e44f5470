/**
 * The pure pieces of the CLI, run from source: rendering, parsing, error
 * lines and exit codes, the progress display under the TestClock.
 */
import { it } from "@effect/vitest"
import * as AgentError from "@switchboard/agent/AgentError"
import { Attachment, SwitchboardError, TaskPoller } from "@switchboard/core"
import * as VideoWorkflow from "@switchboard/workflow/VideoWorkflow"
import * as CliError from "effect/cli/CliError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import { describe, expect, vi } from "vitest"
import { Emulator } from "@switchboard/emulator"
import * as Embed from "../src/commands/embed.js"
import * as EmulatorCommand from "../src/commands/emulator.js"
import * as Errors from "../src/Errors.js"
import * as Fleet from "../src/Fleet.js"
import * as Help from "../src/Help.js"
import * as Inputs from "../src/Inputs.js"
import * as Output from "../src/Output.js"
import * as Progress from "../src/Progress.js"
import * as Video from "../src/commands/video.js"

describe("video's short form", () => {
  const argv = (...args: Array<string>) => ["node", "switchboard", ...args]
  it("puts generate before a prompt or flags, never before a subcommand or --help; video alone is its help", () => {
    expect(Video.expandShortForm(argv("video", "A boat", "--out", "v"))).toEqual(argv("video", "generate", "A boat", "--out", "v"))
    expect(Video.expandShortForm(argv("video", "--model", "video-1", "A boat"))).toEqual(argv("video", "generate", "--model", "video-1", "A boat"))
    for (const sub of ["generate", "resume", "status", "forget", "--help", "-h"]) {
      expect(Video.expandShortForm(argv("video", sub))).toEqual(argv("video", sub))
    }
    expect(Video.expandShortForm(argv("video"))).toEqual(argv("video", "--help"))
    expect(Video.expandShortForm(argv("chat", "video"))).toEqual(argv("chat", "video"))
  })
})

describe("Output", () => {
  it("indents streamed text whatever the chunk boundaries", () => {
    const indent = Output.indenter("  ")
    expect(["Hel", "lo\nwor", "ld\n", "\nend"].map(indent).join("")).toBe("  Hello\n  world\n\n  end")
  })

  it("shows every control character escaped but tab and newline; the CLI's own styles only to a terminal that takes colour", () => {
    const pipe = { isTTY: false } as unknown as Output.Target
    expect(Output.shown("a\tb\r\nc\rd\u0000\u001b[1m\u007f\u009b\n", pipe)).toBe(String.raw`a	b` + "\r\n" + String.raw`c\u000dd\u0000\u001b[1m\u007f\u009b` + "\n")
    const terminal = { isTTY: true } as unknown as Output.Target
    const previous = process.env["NO_COLOR"]
    delete process.env["NO_COLOR"]
    try {
      expect(Output.shown("\x1b[1mA\x1b[22m \x1b[2J\x1b[8m", terminal)).toBe(String.raw`\x1b[1mA\x1b[22m \u001b[2J\u001b[8m`.replace(/\\x1b/g, "\x1b"))
    } finally {
      if (previous !== undefined) process.env["NO_COLOR"] = previous
    }
  })

  it("shows the bidirectional overrides and isolates escaped: a model id cannot display reordered (Trojan Source)", () => {
    const pipe = { isTTY: false } as unknown as Output.Target
    // U+202E reverses what follows on display: "gpt-4o\u202Eyrtne-neddih" would read as "gpt-4ohidden-entry".
    const hostile = "a\u202Ab\u202Bc\u202Cd\u202De\u202Ef\u2066g\u2067h\u2068i\u2069j"
    expect(Output.shown(hostile, pipe)).toBe(String.raw`a\u202ab\u202bc\u202cd\u202de\u202ef\u2066g\u2067h\u2068i\u2069j`)
    // Right-to-left text itself, and its marks, are shown as they are.
    expect(Output.shown("שלום \u200F مرحبا", pipe)).toBe("שלום \u200F مرحبا")
  })

  it.effect("the cluster's log lines (worker, mcp) reach stderr escaped: they may quote the service", () =>
    Effect.gen(function*() {
      const written: Array<string> = []
      const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => written.push(String(chunk)) > 0)
      yield* Effect.ensuring(
        Fleet.logging("warning")(Effect.logWarning("task \u001b]0;pwned\u0007\u009b2J stays in the journal")),
        Effect.sync(() => spy.mockRestore())
      )
      expect(written.join("")).toContain(String.raw`task \u001b]0;pwned\u0007\u009b2J stays in the journal`)
      // eslint-disable-next-line no-control-regex
      expect(written.join("")).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/)
    }))

  it("aligns tables, ignoring ANSI styles", () => {
    expect(Output.table([["\x1b[1mA\x1b[22m", "B"], ["long", "x"]], "> ")).toBe("> \x1b[1mA\x1b[22m     B\n> long  x")
  })

  it("makes file-name slugs", () => {
    expect(Output.slug("A fox, in snow! Élan")).toBe("a-fox-in-snow-elan")
    expect(Output.slug("!!!")).toBe("image")
  })

  it("formats sizes and durations", () => {
    expect(Output.bytes(65536)).toBe("64.0 KiB")
    expect(Output.seconds(1234)).toBe("1.2 s")
    expect(Output.seconds(65_000)).toBe("1 min 5 s")
  })

  it("computes cosine similarity", () => {
    expect(Output.cosine([1, 0], [1, 0])).toBe(1)
    expect(Output.cosine([1, 0], [0, 1])).toBe(0)
    expect(Output.cosine([0, 0], [1, 1])).toBe(0)
  })
})

describe("embed", () => {
  it("lists every pair once, most similar first", () => {
    const pairs = Embed.pairs([[1, 0], [1, 0.1], [0, 1]])
    expect(pairs.map((p) => [p.a, p.b])).toEqual([[0, 1], [1, 2], [0, 2]])
  })

  it("shows a value too small for four decimals as itself, not as 0.0000", () => {
    expect(Embed.render(["t"], [[0.0000123, -0.5, 0, 0.25, 0.1]])).toBe(
      "1 vector of 5 dimensions\n[1.23e-5, -0.5000, 0, 0.2500, … 1 more]"
    )
  })
})

describe("Inputs", () => {
  it("parses durations", () => {
    expect(Inputs.parseDuration("500ms")).toEqual(Duration.millis(500))
    expect(Inputs.parseDuration("2s")).toEqual(Duration.seconds(2))
    expect(Inputs.parseDuration("1.5m")).toEqual(Duration.seconds(90))
    expect(Inputs.parseDuration("3")).toEqual(Duration.seconds(3))
    expect(Inputs.parseDuration("soon")).toBeUndefined()
  })

  it("the emulator command's default key is the emulator's (written out so the CLI loads the emulator only to serve)", () => {
    expect(EmulatorCommand.defaultApiKey).toBe(Emulator.defaultApiKey)
  })

  it("accepts --n for -n", () => {
    expect(Inputs.normalizeArgs(["image", "x", "--n", "2", "--n=3", "--name"])).toEqual(["image", "x", "-n", "2", "-n", "3", "--name"])
  })
})

describe("Errors", () => {
  it("says whether trying again may work as the error itself does (x-should-retry included)", () => {
    expect(Errors.describe(new SwitchboardError.ConflictError({ message: "busy", status: 409 }))).toBe("Conflict (HTTP 409): busy (temporary: trying again may work)")
    expect(Errors.describe(new SwitchboardError.ConflictError({ message: "busy", status: 409, shouldRetry: false }))).toBe("Conflict (HTTP 409): busy")
    expect(Errors.describe(new SwitchboardError.BadRequestError({ message: "odd", status: 400, shouldRetry: true }))).toContain("(temporary: trying again may work)")
  })

  it("gives one line per typed error", () => {
    expect(Errors.describe(new SwitchboardError.AuthenticationError({ message: "bad key", status: 401 }))).toBe(
      "Authentication failed (HTTP 401): bad key — check --api-key or SWITCHBOARD_API_KEY"
    )
    expect(Errors.describe(new SwitchboardError.TaskTimeoutError({ message: "late", taskId: "t1", lastStatus: "processing" })))
      .toBe("Video task t1 is not finished yet (last status: processing); it stays in the journal — finish it later with: switchboard video resume")
    expect(Errors.describe(new Attachment.AttachmentError({ source: "a.png", reason: "NotFound", message: "a.png does not exist" })))
      .toBe("Cannot use this image: a.png does not exist")
    expect(Errors.describe(new SwitchboardError.ConfigurationError({ field: "baseUrl", message: "baseUrl must be an http(s) URL" })))
      .toBe("The base URL must be an http(s) URL — check --base-url or SWITCHBOARD_BASE_URL")
    expect(Errors.describe(new SwitchboardError.ConfigurationError({ field: "timeout", message: "timeout must be a duration" })))
      .toBe("Invalid configuration, nothing was sent: timeout must be a duration")
    expect(Errors.describe(new SwitchboardError.InvalidRequestError({ field: "baseUrl", message: "baseUrl is odd" })))
      .toBe("Invalid request, nothing was sent: baseUrl is odd")
    const unknown = new VideoWorkflow.SubmissionOutcomeUnknownError({
      message: "the submission of video workflow k may have reached the service",
      key: "k",
      request: { model: "video-1", prompt: "a fox" },
      sentAt: 0
    })
    expect(Errors.describe(unknown)).toBe(`Outcome unknown, not sent again: ${unknown.message}`)
    expect(Errors.exitCodeOf(unknown)).toBe(1)
  })

  it("says the agent stopped, and why, for each of the agent's errors", () => {
    const transcript: AgentError.MaxStepsExceeded["transcript"] = []
    expect(Errors.describe(new AgentError.MaxStepsExceeded({ maxSteps: 3, transcript })))
      .toBe("The agent stopped: the model still called tools after 3 steps")
    const errors = [
      new AgentError.BudgetExceeded({ limit: "totalTokens", used: 12, max: 10, transcript }),
      new AgentError.LoopDetected({ tool: "lookup", arguments: "{}", count: 3, transcript }),
      new AgentError.ToolDefect({ tool: "lookup", callId: "call_1", defect: "boom", transcript })
    ]
    for (const error of errors) expect(Errors.describe(error)).toBe(`The agent stopped: ${error.message}`)
  })

  it("maps failures to exit codes", () => {
    expect(Errors.exitCodeOf(new SwitchboardError.ServerError({ message: "down", status: 503 }))).toBe(1)
    expect(Errors.exitCodeOf(new SwitchboardError.InvalidRequestError({ field: "n", message: "n" }))).toBe(2)
    expect(Errors.exitCodeOf(new SwitchboardError.ConfigurationError({ field: "timeout", message: "t" }))).toBe(2)
    expect(Errors.exitCodeOf(new Errors.MissingConfigurationError({ variables: [], message: "" }))).toBe(2)
    expect(Errors.exitCodeOf(new CliError.MissingOption({ option: "x" }))).toBe(2)
    expect(Errors.exitCodeOf(new CliError.ShowHelp({ commandPath: ["switchboard"], errors: [new CliError.MissingArgument({ argument: "prompt" })] })))
      .toBe(2)
    expect(Errors.exitCodeOf(new CliError.ShowHelp({ commandPath: ["switchboard"], errors: [] }))).toBe(0)
    expect(Errors.exitCode(Exit.succeed(1))).toBe(0)
    expect(Errors.exitCode(Exit.interrupt())).toBe(130)
    expect(Errors.exitCode(Exit.fail(new Errors.Reported({ exitCode: 2 })))).toBe(2)
    expect(Errors.exitCode(Exit.die(new Error("boom")))).toBe(1)
  })

  it("adds details with --verbose, and never a key", () => {
    const error = new SwitchboardError.NotFoundError({ message: "no model", status: 404, requestId: "req_1", param: "model" })
    const text = Errors.render(error, true)
    expect(text.split("\n")).toEqual([
      "✖ Unknown model (HTTP 404): no model — `switchboard models` lists them",
      "  error: NotFoundError",
      "  status: 404",
      "  requestId: req_1",
      "  param: model"
    ])
  })
})

describe("Help", () => {
  const doc = {
    description: "Chat with a model; the reply streams to the terminal as it arrives",
    usage: "switchboard chat [flags] <prompt>",
    commandPath: ["switchboard", "chat"],
    annotations: Context.empty(),
    args: [{ name: "prompt", type: "string", description: Option.some("What to say"), required: true, variadic: false }],
    flags: [
      { name: "model", aliases: [], type: "text", description: Option.some("The chat model (default: gpt-4o-mini)"), required: false },
      { name: "image", aliases: [], type: "file|url", description: Option.some(`An image to send ${Inputs.repeatedMark}`), required: true },
      { name: "json", aliases: [], type: "boolean", description: Option.none(), required: false }
    ]
  }
  const pipe = (columns: number) => ({ isTTY: false, columns }) as unknown as Output.Target

  it("marks optional and repeatable flags in the usage, and wraps to the width", () => {
    const previous = process.env["COLUMNS"]
    process.env["COLUMNS"] = "40"
    try {
      const text = Help.render(Help.screen(doc), pipe(40))
      expect(text).toContain("USAGE\n  switchboard chat [--model text]\n      [--image file|url]... [--json]\n      <prompt>")
      // A boolean flag takes no value.
      expect(text.split("\n")).toContain("  --json")
      expect(text).not.toContain("\x1b[")
      for (const line of text.split("\n")) if (line.trim().includes(" ")) expect(line.length, line).toBeLessThanOrEqual(40)
    } finally {
      if (previous === undefined) delete process.env["COLUMNS"]
      else process.env["COLUMNS"] = previous
    }
  })

  it("says the parser's usage errors in one line each, in the 3 edition's words", () => {
    expect(Help.usageLine(new CliError.UnknownSubcommand({ subcommand: "teleport", parent: ["switchboard"], suggestions: [] })))
      .toBe("Invalid subcommand for switchboard: 'teleport'")
    expect(Help.usageLine(new CliError.UnrecognizedOption({ option: "--colour", suggestions: ["--json"] })))
      .toBe("Received unknown argument: '--colour' — did you mean '--json'?")
    expect(Help.usageLine(new CliError.UnexpectedArgument({ arguments: ["b"] }))).toBe("Received unknown argument: 'b'")
    expect(Help.usageLine(new CliError.MissingArgument({ argument: "prompt" }))).toBe("Missing argument <prompt>")
    const twice = new CliError.ShowHelp({
      commandPath: ["switchboard", "chat"],
      errors: [new CliError.MissingArgument({ argument: "prompt" }), new CliError.ValidationError({ message: "--top: -1 is not allowed" })]
    })
    expect(Errors.render(twice, false)).toBe("✖ Missing argument <prompt>\n✖ --top: -1 is not allowed")
  })
})

/** A stand-in for a terminal or a pipe that keeps what is written. */
const fakeTarget = (isTTY: boolean) => {
  const written: Array<string> = []
  const target = { isTTY, columns: 100, write: (s: string) => written.push(s) } as unknown as Output.Target
  return { target, text: () => written.join("") }
}

const update = {
  queued: TaskPoller.TaskUpdate.InProgress({ taskId: "t", status: "queued", progress: 0 }),
  half: TaskPoller.TaskUpdate.InProgress({ taskId: "t", status: "processing", progress: 50 }),
  raw: TaskPoller.TaskUpdate.InProgress({ taskId: "t", status: "rendering" }),
  done: TaskPoller.TaskUpdate.Succeeded({ taskId: "t", videoUrl: "http://x/v.mp4" })
}

describe("Progress", () => {
  it("renders a bar with progress and a spinner with the raw state without", () => {
    expect(Progress.renderLine({ status: "processing", progress: 50 }, 0, 3200)).toBe(
      `${"█".repeat(15)}${"░".repeat(15)}  50% processing · 3.2 s`
    )
    expect(Progress.renderLine({ status: "rendering" }, 1, 0)).toBe("⠙ rendering · 0.0 s")
  })

  it.effect("off a terminal writes one plain line per change", () =>
    Effect.gen(function*() {
      const { target, text } = fakeTarget(false)
      const progress = yield* Progress.make({ target })
      for (const u of [update.queued, update.queued, update.half, update.raw, update.done]) yield* progress.update(u)
      expect(text()).toBe("  queued 0%\n  processing 50%\n  rendering\n  succeed 100%\n")
    }))

  it.effect("on a terminal redraws in place, ticks between polls, ends the line when done", () =>
    Effect.gen(function*() {
      const { target, text } = fakeTarget(true)
      const progress = yield* Progress.make({ target, indent: "" })
      yield* Effect.yieldNow
      yield* progress.update(update.raw)
      yield* TestClock.adjust("1 second")
      yield* progress.update(update.done)
      const frames = text().split("\r\x1b[2K").filter((f) => f !== "")
      expect(frames[0]).toBe("⠋ waiting for the first status · 0.0 s")
      expect(frames).toContain("⠙ rendering · 0.0 s")
      expect(frames.filter((f) => f.includes("rendering")).length).toBeGreaterThan(5)
      expect(frames.at(-1)).toBe(`${"█".repeat(30)} 100% succeed · 1.0 s\n`)
    }))

  it.effect("on a terminal a hostile status is shown escaped, on one line: the only controls are the redraw's own", () =>
    Effect.gen(function*() {
      const { target, text } = fakeTarget(true)
      const status = "\u001b]0;pwned\u0007\u001b[2J\r\u009b2K\nx"
      yield* Effect.scoped(Effect.flatMap(Progress.make({ target, indent: "" }), (p) =>
        p.update(TaskPoller.TaskUpdate.InProgress({ taskId: "t", status }))))
      const frames = text().split("\r\x1b[2K").filter((f) => f !== "")
      expect(frames.at(-1)?.slice(2)).toBe(String.raw`\u001b]0;pwned\u0007\u001b[2J\u000d\u009b2K\u000ax · 0.0 s` + "\n")
      // eslint-disable-next-line no-control-regex
      for (const frame of frames) expect(frame).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/)
    }))

  it.effect("on a terminal ends a line left open when interrupted", () =>
    Effect.gen(function*() {
      const { target, text } = fakeTarget(true)
      yield* Effect.scoped(Effect.flatMap(Progress.make({ target, indent: "" }), (p) => p.update(update.half)))
      expect(text().endsWith("processing · 0.0 s\n")).toBe(true)
    }))
})
