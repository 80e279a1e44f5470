/**
 * Issue 29, case 1, across real processes: a runner (`fixtures/submitter.mjs`
 * over the built package, one sqlite file) sends a video submission; the
 * emulator (in this process) has made the task and sent its status line, and
 * holds the rest of its answer until the test has SIGKILLed that runner. No
 * result can be stored before the kill: the kill is in the window by
 * construction, not by timing. A second runner on the file then replays the
 * workflow.
 * - at most once (the default): the workflow ends in
 *   SubmissionOutcomeUnknownError with the request and the time it was about
 *   to be sent; the emulator received one submission.
 * - at least once (opt-in): the second runner submits again (two
 *   submissions, two tasks made) and the workflow ends with the second task's video.
 */
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Processes from "@switchboard/test-support/Processes"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { Cluster, VideoWorkflow } from "../src/index.js"
import { awaitRequests } from "./fleet.js"
import * as Ports from "@switchboard/test-support/Ports"
import { type Postgres, settled, startPostgres } from "./postgres.js"
import { build, readLog } from "./processes.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
const request = { model: "video-1", prompt: "a paid clip" }
const dirs: Array<string> = []

let postgres: Postgres | undefined

beforeAll(() => {
  postgres = startPostgres(Ports.postgres.submission())
  build()
}, 240_000)
afterAll(async () => {
  await Processes.stopAll()
  postgres?.stop()
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

interface Event {
  readonly pid: number
  readonly at: number
  readonly ev: "submitting" | "submit" | "tool"
  readonly taskId?: string
}


const startSubmitter = (env: Readonly<Record<string, string>>) =>
  Processes.start(Path.join(here, "fixtures/submitter.mjs"), [], { cwd: Path.resolve(here, ".."), env: { ...process.env, ...env } })

interface End {
  readonly exit: "Success" | "Failure"
  readonly status?: string
  readonly roles?: ReadonlyArray<string>
  readonly video?: { readonly taskId: string; readonly videoUrl: string }
  readonly error?: Record<string, unknown>
}

/** The first submission: its status line and headers sent (the task is made), the body held. */
const holdFirstSubmission = Emulator.layer({
  faults: { paths: ["/v1/chat/completions"], script: [{ _tag: "Delay", delay: "1 hour", afterHeaders: true }] }
})

const tempLog = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-submission-"))
  dirs.push(dir)
  return { dir, log: Path.join(dir, "log.jsonl") }
}

/**
 * The first runner killed while the emulator holds its submission's answer,
 * then a second runner on the same sqlite file until the workflow ends.
 */
const killedInTheWindow = async (submission: Readonly<Record<string, string>>) => {
  const runtime = ManagedRuntime.make(holdFirstSubmission)
  onTestFinished(() => runtime.dispose())
  onTestFinished(Processes.stopAll)
  const emulator = await runtime.runPromise(Emulator.Emulator)
  const { dir, log } = tempLog()
  const env = {
    DATABASE: `sqlite:${Path.join(dir, "workflows.sqlite")}`,
    BASE_URL: emulator.url,
    API_KEY: emulator.apiKey,
    LOG: log,
    KEY: "paid-1",
    PORT: String(Ports.runner(9))
  }
  const first = startSubmitter({ ...env, ...submission, START: "1" })
  await awaitRequests(runtime, emulator, (submissions) => submissions >= 1)
  await first.kill()
  expect(readLog<Event>(log).map((e) => e.ev)).toEqual(["submitting"])

  const second = startSubmitter({ ...env, FOLLOW: "1" })
  const out = await second.waitFor(/^end /m, "stdout")
  await second.kill()
  const end = JSON.parse(out.match(/^end (.*)$/m)![1]!) as End
  const submissions = (await runtime.runPromise(emulator.requests)).filter((r) => r.path.endsWith("/chat/completions"))
  return { end, submissions, events: readLog<Event>(log), first, second }
}

describe("a submission whose runner is killed before its answer is stored (sqlite, restarted)", () => {
  it("at most once (the default): SubmissionOutcomeUnknownError, one submission, none by the second runner", async () => {
    const { end, events, first, second, submissions } = await killedInTheWindow({})
    console.log(`at most once: ${end.exit} ${String(end.error?._tag)}, ${submissions.length} submission(s)`)
    expect(end.exit).toBe("Failure")
    expect(end.error).toMatchObject({ _tag: "SubmissionOutcomeUnknownError", key: "paid-1", request })
    expect(end.error?.message).toMatch(/may have reached the service/)
    // Stored before the request went out: no later than the first runner's log of it.
    const sending = events.find((e) => e.ev === "submitting")!
    expect(sending.pid).toBe(first.pid)
    expect(end.error?.sentAt).toBeLessThanOrEqual(sending.at)
    expect(submissions).toHaveLength(1)
    expect(events.filter((e) => e.pid === second.pid)).toEqual([])
  }, 120_000)

  it("at least once (opt-in at start): the second runner submits again and the task ends", async () => {
    const { end, events, second, submissions } = await killedInTheWindow({ SUBMISSION: "at-least-once" })
    console.log(`at least once: ${end.exit}, ${submissions.length} submissions`)
    expect(end.exit).toBe("Success")
    expect(submissions).toHaveLength(2)
    const resubmitted = events.filter((e) => e.pid === second.pid && e.ev === "submit")
    expect(resubmitted).toHaveLength(1)
    expect(end.video?.taskId).toBe(resubmitted[0]!.taskId)
  }, 120_000)
})

/**
 * A fleet of two runners on Postgres; the workflow started from a client (this
 * process). The runner that sends the submission is killed while the emulator
 * holds its answer; the other takes its shards and replays the workflow.
 */
const killedInAFleet = async (name: string, submission: VideoWorkflow.Submission | undefined) => {
  const url = postgres!.database(name)
  const runtime = ManagedRuntime.make(
    Layer.merge(holdFirstSubmission, Layer.unwrap(Effect.map(Cluster.parseDatabase(url), (database) => Cluster.layerClient({ database }))))
  )
  onTestFinished(() => runtime.dispose())
  onTestFinished(Processes.stopAll)
  const emulator = await runtime.runPromise(Emulator.Emulator)
  const { log } = tempLog()
  const env = { DATABASE: url, BASE_URL: emulator.url, API_KEY: emulator.apiKey, LOG: log, KEY: "paid-fleet" }
  const runners = [7, 8].map((offset) => startSubmitter({ ...env, PORT: String(Ports.runner(offset)) }))
  await Promise.all(runners.map((runner) => runner.waitFor(/^ready$/m, "stdout")))
  // Started once the shards are shared out: a shard moving between live
  // runners is another way to replay a submission (docs/fleet.md).
  await settled(url, 2)
  await runtime.runPromise(VideoWorkflow.start(request, { key: "paid-fleet", ...(submission ? { submission } : {}) }))
  await awaitRequests(runtime, emulator, (submissions) => submissions >= 1)
  const sender = runners.find((runner) => runner.pid === readLog<Event>(log).find((e) => e.ev === "submitting")?.pid)!
  await sender.kill()
  const survivor = runners.find((runner) => runner !== sender)!
  const result = await runtime.runPromise(
    VideoWorkflow.result("paid-fleet").pipe(
      Effect.repeat({ until: (r) => r?._tag === "Complete", schedule: Schedule.spaced("200 millis") })
    )
  )
  await survivor.kill()
  const submissions = (await runtime.runPromise(emulator.requests)).filter((r) => r.path.endsWith("/chat/completions"))
  return { exit: result!._tag === "Complete" ? result!.exit : undefined, submissions, events: readLog<Event>(log), sender, survivor }
}

describe("a submission whose runner is killed before its answer is stored (a fleet on Postgres)", () => {
  it("at most once (the default): the other runner ends it in SubmissionOutcomeUnknownError, one submission", async () => {
    const { events, exit, sender, submissions, survivor } = await killedInAFleet("once", undefined)
    const error = exit?._tag === "Failure" ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
    console.log(`fleet, at most once: ${exit?._tag} ${String(error?._tag)}, ${submissions.length} submission(s)`)
    expect(error).toBeInstanceOf(VideoWorkflow.SubmissionOutcomeUnknownError)
    expect(error).toMatchObject({ key: "paid-fleet", request })
    expect(submissions).toHaveLength(1)
    expect(events.map((e) => [e.ev, e.pid])).toEqual([["submitting", sender.pid]])
    expect(events.some((e) => e.pid === survivor.pid)).toBe(false)
  }, 180_000)

  it("at least once (opt-in at start): the other runner submits again and the task ends", async () => {
    const { events, exit, submissions, survivor } = await killedInAFleet("twice", "at-least-once")
    console.log(`fleet, at least once: ${exit?._tag}, ${submissions.length} submissions`)
    expect(exit?._tag).toBe("Success")
    expect(submissions).toHaveLength(2)
    const resubmitted = events.filter((e) => e.pid === survivor.pid && e.ev === "submit")
    expect(resubmitted).toHaveLength(1)
    expect(exit?._tag === "Success" ? exit.value.taskId : undefined).toBe(resubmitted[0]!.taskId)
  }, 180_000)
})

/**
 * AgentWorkflow's calls in the same window, on sqlite: the runner killed
 * while the emulator holds a model call's answer, or while a tool runs (the
 * tool's handler never ends on the first runner); a second runner replays.
 */
describe("an agent run whose runner is killed inside a call (sqlite, restarted)", () => {
  const agentRun = async (faults: Emulator.Options, first: Readonly<Record<string, string>>, killWhen: (
    runtime: ManagedRuntime.ManagedRuntime<Emulator.Emulator, unknown>,
    emulator: Emulator.Emulator["Service"],
    runner: Processes.Running
  ) => Promise<unknown>) => {
    const runtime = ManagedRuntime.make(Emulator.layer(faults))
    onTestFinished(() => runtime.dispose())
    onTestFinished(Processes.stopAll)
    const emulator = await runtime.runPromise(Emulator.Emulator)
    const { dir, log } = tempLog()
    const env = {
      DATABASE: `sqlite:${Path.join(dir, "workflows.sqlite")}`,
      BASE_URL: emulator.url,
      API_KEY: emulator.apiKey,
      LOG: log,
      KEY: "agent-1"
    }
    const runner = startSubmitter({ ...env, ...first, AGENT_START: "1" })
    await killWhen(runtime, emulator, runner)
    await runner.kill()
    const second = startSubmitter({ ...env, AGENT_FOLLOW: "1" })
    const out = await second.waitFor(/^end /m, "stdout")
    await second.kill()
    const end = JSON.parse(out.match(/^end (.*)$/m)![1]!) as End
    const completions = (await runtime.runPromise(emulator.requests)).filter((r) => r.path.endsWith("/chat/completions"))
    return { end, completions, tools: readLog<Event>(log).filter((e) => e.ev === "tool"), runner, second }
  }

  it("a model call sent but not stored is made again by the replay", async () => {
    const { completions, end, tools } = await agentRun(
      { faults: { paths: ["/v1/chat/completions"], script: [{ _tag: "Delay", delay: "1 hour", afterHeaders: true }] } },
      {},
      (runtime, emulator) => awaitRequests(runtime, emulator, (calls) => calls >= 1)
    )
    console.log(`agent, model call: ${end.exit} ${String(end.status)}, ${completions.length} model calls, tool run ${tools.length}x`)
    expect(end).toMatchObject({ exit: "Success", status: "completed" })
    // Step 0 twice (the same request), then the call after the tool.
    expect(completions).toHaveLength(3)
    expect(completions[1]!.body).toEqual(completions[0]!.body)
    expect(tools).toHaveLength(1)
  }, 120_000)

  it("a tool that ran but whose result was not stored runs again in the replay", async () => {
    const { completions, end, runner, second, tools } = await agentRun(
      {},
      { HOLD_TOOL: "1" },
      (_runtime, _emulator, runner) => runner.waitFor(/^tool /m, "stdout")
    )
    console.log(`agent, tool: ${end.exit} ${String(end.status)}, ${completions.length} model calls, tool run ${tools.length}x`)
    expect(end).toMatchObject({ exit: "Success", status: "completed" })
    expect(tools.map((e) => e.pid)).toEqual([runner.pid, second.pid])
    // Step 0's model call was stored before the tool ran: only the call after the tool is new.
    expect(completions).toHaveLength(2)
  }, 120_000)
})
