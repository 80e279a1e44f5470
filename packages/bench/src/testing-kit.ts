/**
 * What the testing kit costs a user's test suite, in one process:
 * `pnpm bench:testing-kit [rounds]` (default 7). Prints the section "The
 * testing kit" and writes it into docs/performance.md (`--no-write`:
 * prints only); `pnpm bench` keeps it (`lib/sections.ts`).
 *
 * - A 1,000-chunk `Chat.stream` read to its end, five ways, interleaved
 *   round by round (A B C D E A B C D E …): decoded from the loopback server
 *   (`src/server.ts`, its own process) over `NodeSwitchboard` built once,
 *   the same with the layer built for each stream (as a test against a
 *   server builds it), scripted (`ScriptedModel.layer` built for each stream, as a test does),
 *   and replayed from a cassette recorded from that server (the layer, which
 *   reads the file, built for each stream), on the live clock (waiting the
 *   recorded gaps) and on a `TestClock` moved by `TestTime.run`, as a test
 *   under `it.effect` replays. CPU of this process only.
 * - A test file's worth of agent runs: 50 `Agent.run`s (a tool call, then a
 *   text), each on a `ScriptedModel.layer` of its own; their CPU together.
 *
 * Medians and min–max over the rounds, CPU microseconds.
 */
import { Agent } from "@switchboard/agent"
import { Chat } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"
import * as NodeHttpWire from "@switchboard/node/NodeHttpWire"
import { Reply, ScriptedModel, TestTime } from "@switchboard/testing"
import * as Cassette from "@switchboard/testing/Cassette"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { apiKey, streamRequest } from "./lib/fixtures.js"
import { startServer, stopAll } from "./lib/processes.js"
import { measured, ownSections, publish, roundsArg } from "./lib/sections.js"

const chunks = 1_000
const streamsPerRound = 10
const agentRuns = 50
const rounds = roundsArg(7)
const own = ownSections[1]

const cpuOf = async (f: () => Promise<unknown>): Promise<number> => {
  const before = process.cpuUsage()
  await f()
  const used = process.cpuUsage(before)
  return used.user + used.system
}

const summary = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return { median: Math.round(sorted[Math.floor(sorted.length / 2)]!), min: Math.round(sorted[0]!), max: Math.round(sorted.at(-1)!) }
}

/** Reads a stream to its end, checking it carried every chunk. */
const readAll = (stream: Stream.Stream<unknown, unknown, Chat.Chat>) =>
  Effect.flatMap(Stream.runCount(stream), (count) =>
    count === chunks ? Effect.void : Effect.die(new Error(`${count} chunks, expected ${chunks}`)))

// A text of `chunks - 2` words: the role chunk, a chunk per word, the finish chunk.
const scriptedText = Array.from({ length: chunks - 2 }, (_, i) => `w${i}`).join(" ")
const ask = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Count for me." }] }

const Add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ sum: Schema.Finite })
})
const toolkit = Toolkit.make(Add)
const handlers = toolkit.toLayer({ add: ({ a, b }) => Effect.succeed({ sum: a + b }) })

const agentRun = Agent.run({ model: "gpt-4o-mini", toolkit, messages: [{ role: "user", content: "2 + 3?" }] }).pipe(
  Effect.provide(handlers),
  Effect.provide(ScriptedModel.layer([Reply.toolCall("add", { a: 2, b: 3 }), Reply.text("5")]))
)

type Summary = ReturnType<typeof summary>

const number = (n: number) => n.toLocaleString("en-US")
const ratio = (side: Summary, base: Summary) => side.median / base.median
const times = (n: number) => `${n.toFixed(2)} ×`

/** The page's section: the CPU per stream of each side, the targets, and why the live clock costs more. */
const section = (
  cpu: Record<"loopback" | "loopbackLayer" | "scripted" | "replayed" | "replayedTestClock", Summary>,
  agentsCpu: Summary,
  cassetteBytes: number
): string => {
  const row = (side: keyof typeof cpu, label: string, what: string) =>
    `| ${label} | ${what} | ${number(cpu[side].median)} µs | ${number(cpu[side].min)}–${number(cpu[side].max)} | ${
      times(ratio(cpu[side], cpu.loopback))
    } |`
  const verdict = (target: string, measuredText: string, pass: boolean) => `| ${target} | ${measuredText} | ${pass ? "pass" : "missed"} |`
  const against = (side: "scripted" | "replayedTestClock") =>
    `${times(ratio(cpu[side], cpu.loopback))} (${number(cpu[side].median)} vs ${number(cpu.loopback.median)} µs)`
  const ms = (micros: number) => Math.round(micros / 1000)
  return [
    own.title,
    "",
    `${measured(own)} One process, ${rounds} interleaved round${rounds === 1 ? "" : "s"} of ${streamsPerRound} streams per side, the CPU of ` +
      `that process only (the loopback server is its own process): a ${number(chunks)}-chunk \`Chat.stream\` read to ` +
      `its end. Ratios within the run hold under load; absolute microseconds move with it.`,
    "",
    "| side | what | CPU per stream (median) | min–max | × loopback |",
    "| --- | --- | --- | --- | --- |",
    row("loopback", "loopback", "the bench's server over `NodeSwitchboard.layer`, built once"),
    row("loopbackLayer", "loopback, layer per stream", "the same, the layer built for each stream (as a test builds it)"),
    row("scripted", "scripted", `\`ScriptedModel.layer([Reply.text(${number(chunks - 2)} words)])\`, built for each stream`),
    row(
      "replayedTestClock",
      "replayed, `TestClock`",
      "`Cassette.layer` in `replay` mode over the loopback stream recorded once, built for each stream, under " +
        "`TestTime.run` on a `TestClock` (as `it.effect` runs it)"
    ),
    row("replayed", "replayed, live clock", "the same on the live clock: the recorded gaps are waited for"),
    "",
    "| target | measured | result |",
    "| --- | --- | --- |",
    verdict(
      `a scripted ${number(chunks)}-chunk stream costs at most the CPU of the same stream from the loopback server`,
      against("scripted"),
      ratio(cpu.scripted, cpu.loopback) <= 1
    ),
    verdict(
      `a replayed ${number(chunks)}-chunk stream (under a test's \`TestClock\`) costs at most the CPU of the loopback's`,
      against("replayedTestClock"),
      ratio(cpu.replayedTestClock, cpu.loopback) <= 1
    ),
    verdict(
      `a test file of ${agentRuns} scripted agent runs (a tool call, then a text; a \`ScriptedModel.layer\` each) in under a second of CPU`,
      `${ms(agentsCpu.median)} ms (${ms(agentsCpu.min)}–${ms(agentsCpu.max)} ms over rounds)`,
      agentsCpu.median < 1_000_000
    ),
    "",
    "On the live clock the replay waits the gaps it recorded (the server writes 256 events at a time), and the " +
    "process idles between them: that costs CPU of its own (a probe on 2026-11-28 replaying the same file with " +
    "the gaps set to 0 took 2.3–2.6 ms against 3.9–4.8 ms), which is why the live-clock row can be above the " +
    "loopback's. Under `it.effect` the gaps pass on the `TestClock` at once. The cassette file " +
    `(${number(Math.round(cassetteBytes / 1024))} KB for this stream, JSON text) is parsed once per process and ` +
    "reused while unchanged.",
    ""
  ].join("\n")
}

const main = async () => {
  const server = await startServer()
  const baseUrl = `http://127.0.0.1:${server.port}`
  const loopback = ManagedRuntime.make(NodeSwitchboard.layer({ baseUrl, apiKey }))
  const file = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-bench-cassette-")), "stream.json")
  const cassette = (mode: Cassette.Mode) =>
    Cassette.layer({ path: file, mode, baseUrl, apiKey }).pipe(Layer.provide(NodeHttpWire.layer))
  try {
    const { stream: _stream, ...request } = streamRequest(chunks)
    await Effect.runPromise(Effect.provide(readAll(Chat.stream(request)), cassette("record")))
    const sides = {
      loopback: () => loopback.runPromise(readAll(Chat.stream(request))),
      loopbackLayer: () => Effect.runPromise(Effect.provide(readAll(Chat.stream(request)), NodeSwitchboard.layer({ baseUrl, apiKey }))),
      scripted: () => Effect.runPromise(Effect.provide(readAll(Chat.stream(ask)), ScriptedModel.layer([Reply.text(scriptedText)]))),
      replayed: () => Effect.runPromise(Effect.provide(readAll(Chat.stream(request)), cassette("replay"))),
      // As a test under `it.effect` replays: the recorded gaps on a TestClock, moved by TestTime.run.
      replayedTestClock: () =>
        Effect.runPromise(
          TestTime.run(readAll(Chat.stream(request))).pipe(Effect.provide(cassette("replay")), Effect.provide(TestClock.layer()))
        )
    }
    const per: Record<keyof typeof sides, Array<number>> = {
      loopback: [],
      loopbackLayer: [],
      scripted: [],
      replayed: [],
      replayedTestClock: []
    }
    const agents: Array<number> = []
    // Warm-up: one of each.
    for (const side of Object.values(sides)) await side()
    await Effect.runPromise(agentRun)
    for (let round = 0; round < rounds; round++) {
      for (const [name, side] of Object.entries(sides) as Array<[keyof typeof sides, () => Promise<unknown>]>) {
        const cpu = await cpuOf(async () => {
          for (let i = 0; i < streamsPerRound; i++) await side()
        })
        per[name].push(cpu / streamsPerRound)
      }
      agents.push(await cpuOf(async () => {
        for (let i = 0; i < agentRuns; i++) await Effect.runPromise(agentRun)
      }))
    }
    publish(section({
      loopback: summary(per.loopback),
      loopbackLayer: summary(per.loopbackLayer),
      scripted: summary(per.scripted),
      replayed: summary(per.replayed),
      replayedTestClock: summary(per.replayedTestClock)
    }, summary(agents), Fs.statSync(file).size))
  } finally {
    await loopback.dispose()
    await server.stop()
    stopAll()
  }
}

await main()
