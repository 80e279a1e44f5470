/**
 * The task journal's promises, over real HTTP: checked before a paid
 * submission, a bad record set aside without blocking the others, a
 * succeeded task kept (with its URL) until its video is saved, a task the
 * service does not know dropped with a typed error, replies that carry no
 * usable task id or video URL refused, and image generation never re-sent
 * once it may have been received.
 */
import { describe, expect, it } from "@effect/vitest"
import { Images, TaskJournal, Videos } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeMedia, NodeSwitchboard, NodeTaskJournal } from "../src/index.js"
import { emulated, eventually, waitUntil } from "./fixtures.js"

const temporaryDirectory = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-journal-"))
const instant = { schedule: Schedule.spaced("0 millis") } as const

const sdkAt = (journalDirectory: string, options: Partial<NodeSwitchboard.Options> = {}) =>
  Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) =>
      NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, journalDirectory, ...options }))
  )

const submissions = Effect.map(
  Effect.flatMap(Emulator.Emulator, (e) => e.requests),
  (requests) => requests.filter((r) => r.path === "/v1/chat/completions").length
)
const statusCalls = Effect.map(
  Effect.flatMap(Emulator.Emulator, (e) => e.requests),
  (requests) => requests.filter((r) => r.path === "/v1/chat/task/status").length
)

const record = (directory: string, entry: Record<string, unknown>) =>
  Fs.writeFileSync(Path.join(directory, `task-${String(entry["taskId"])}.json`), JSON.stringify(entry))

describe("the journal before paying", () => {
  it.live("a journal that cannot be written: JournalError, and nothing is sent", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const error = yield* Effect.gen(function*() {
        // The directory disappears under the running program, a file in its place.
        Fs.rmSync(directory, { recursive: true })
        Fs.writeFileSync(directory, "not a directory")
        return yield* Effect.flip(Videos.submit({ model: "video-1", prompt: "A paid task" }))
      }).pipe(Effect.provide(sdkAt(directory)))
      expect(error._tag).toBe("JournalError")
      expect(yield* submissions).toBe(0)
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("a bad record is set aside and reported; the valid ones are resumed; submissions go on", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const taskIds = yield* Effect.forEach([1, 2], (i) => Videos.submit({ model: "video-1", prompt: `valid ${i}` })).pipe(
        Effect.provide(sdkAt(directory))
      )
      record(directory, { taskId: "task_bad", model: "video-1", prompt: "bad", submittedAt: "yesterday" })
      Fs.writeFileSync(Path.join(directory, "task-truncated.json"), "{\"taskId\":\"task_tru")
      const outcome = yield* Effect.gen(function*() {
        const another = yield* Videos.submit({ model: "video-1", prompt: "submitted beside a bad record" })
        const { pending, quarantined } = yield* Videos.resumePending(instant)
        const finished = yield* Effect.forEach(pending, (p) =>
          Effect.andThen(Stream.runDrain(p.updates), Effect.as(Videos.complete(p.entry.taskId), p.entry.taskId)))
        return { another, finished, quarantined }
      }).pipe(Effect.provide(sdkAt(directory)))
      expect([...outcome.finished].sort()).toEqual([...taskIds, outcome.another].sort())
      expect(outcome.quarantined.map((q) => q.key).sort()).toEqual(["task-task_bad", "task-truncated"])
      for (const q of outcome.quarantined) {
        expect(q.movedTo).toContain(Path.join(directory, "quarantine"))
        expect(Fs.existsSync(q.movedTo)).toBe(true)
      }
      const after = yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.scan).pipe(Effect.provide(NodeTaskJournal.layer(directory)))
      expect(after).toEqual({ entries: [], quarantined: [] })
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("the one-file journal of an earlier version is imported, each valid entry as its own record", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const entry = { taskId: "task_old", model: "video-1", prompt: "old", submittedAt: 5 }
      Fs.writeFileSync(Path.join(directory, "switchboard-video-tasks.json"), JSON.stringify([entry, { taskId: 7 }]))
      const entries = yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list).pipe(Effect.provide(NodeTaskJournal.layer(directory)))
      expect(entries).toEqual([entry])
      expect(Fs.readdirSync(directory).sort()).toEqual(["task-task_old.json"])
    }))

  it.live("opening removes temporary files of processes that are gone, not those of running ones nor of another process table", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      // This process table (Linux): its boot and PID namespace.
      const table = `${Fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()} ${Fs.readlinkSync("/proc/self/ns/pid")}`
      const tag = Crypto.createHash("sha256").update(table).digest("hex").slice(0, 12)
      const dead = `task-x.json.999999999-${tag}.1.abc.tmp`
      const running = `task-y.json.${process.pid}-${tag}.1.abc.tmp`
      // Another container's: its pid means nothing here, so it stays until abandoned (an hour old).
      const foreign = "task-z.json.999999999-0123456789ab.1.abc.tmp"
      const abandoned = "task-w.json.999999999-0123456789ab.1.abc.tmp"
      for (const name of [dead, running, foreign, abandoned]) Fs.writeFileSync(Path.join(directory, name), "{")
      const anHourAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
      Fs.utimesSync(Path.join(directory, abandoned), anHourAgo, anHourAgo)
      yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list).pipe(Effect.provide(NodeTaskJournal.layer(directory)))
      expect(Fs.readdirSync(directory).filter((name) => name.endsWith(".tmp")).sort()).toEqual([running, foreign].sort())
    }))
})

describe("claims", () => {
  it.effect("a renewal that fails does not end the renewals: the next one lands, and the claim outlives its first expiry", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const claimFile = Path.join(directory, "claim-t1.json")
      const journal = yield* Effect.provide(TaskJournal.TaskJournal, NodeTaskJournal.layer(directory))
      expect(yield* journal.claim("t1")).toBe(true)
      yield* eventually(RecordingClock.sleeps, (s) => s.length > 0)
      // The claim cannot be read for one renewal (the disk hiccups).
      const held = Fs.readFileSync(claimFile, "utf8")
      Fs.rmSync(claimFile)
      Fs.mkdirSync(claimFile)
      yield* TestClock.adjust("40 seconds")
      yield* eventually(RecordingClock.sleeps, (s) => s.length > 0)
      Fs.rmdirSync(claimFile)
      Fs.writeFileSync(claimFile, held)
      yield* TestClock.adjust("40 seconds")
      const now = yield* Clock.currentTimeMillis
      yield* eventually(Effect.sync(() => JSON.parse(Fs.readFileSync(claimFile, "utf8")).expiresAt), (at) => at >= now + 120_000)
    }).pipe(Effect.provide(RecordingClock.layer)))
})

describe("kept until the video is saved", () => {
  it.live("interrupted while downloading after succeed: the task stays with its URL; the next program saves it without polling", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const directory = temporaryDirectory()
      const out = temporaryDirectory()
      const first = yield* Effect.forkChild(
        Effect.flatMap(Videos.submit({ model: "video-1", prompt: "A boat" }, { output: out }), (taskId) =>
          NodeMedia.finishVideo(taskId, instant)).pipe(Effect.provide(Layer.merge(sdkAt(directory), NodeMedia.layer)))
      )
      // The download hangs; the program is stopped then (Ctrl-C after "succeed 100%").
      yield* emulator.setFaults({ paths: ["/files/"], script: [{ _tag: "Delay", delay: "1 hour" }] })
      const requests = yield* waitUntil(emulator.requests, (rs) => rs.some((r) => r.path.startsWith("/files/")))
      yield* Fiber.interrupt(first)
      yield* emulator.setFaults({ script: [] })
      const [kept] = yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list).pipe(Effect.provide(NodeTaskJournal.layer(directory)))
      expect(kept).toMatchObject({ output: out, videoUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/files\/task_\w+\.mp4$/) })

      const polledBefore = requests.filter((r) => r.path === "/v1/chat/task/status").length
      const saved = yield* Effect.gen(function*() {
        const { pending } = yield* Videos.resumePending()
        return yield* Effect.forEach(pending, (p) =>
          Effect.flatMap(Videos.outcome(p.entry.taskId, p.updates), (done) => NodeMedia.saveVideo(done, p.entry.output ?? ".")))
      }).pipe(Effect.provide(Layer.merge(sdkAt(directory), NodeMedia.layer)))
      expect(saved).toEqual([Path.join(out, `${kept!.taskId}.mp4`)])
      expect(Fs.readFileSync(saved[0]!).subarray(4, 8).toString("latin1")).toBe("ftyp")
      expect(yield* statusCalls).toBe(polledBefore)
      expect(Fs.readdirSync(directory).filter((name) => name.startsWith("task-"))).toEqual([])
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("finishVideo polls, saves into the directory given at submission, and only then completes the task", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const out = temporaryDirectory()
      const seen: Array<string> = []
      const path = yield* Effect.flatMap(Videos.submit({ model: "video-1", prompt: "A kite" }, { output: out }), (taskId) =>
        NodeMedia.finishVideo(taskId, {
          ...instant,
          onUpdate: (update) => Effect.sync(() => seen.push(update._tag === "InProgress" ? update.status : update._tag))
        })).pipe(Effect.provide(Layer.merge(sdkAt(directory), NodeMedia.layer)))
      expect(seen).toEqual(["queued", "processing", "Succeeded"])
      expect(Path.dirname(path)).toBe(out)
      expect(Fs.readFileSync(path).subarray(4, 8).toString("latin1")).toBe("ftyp")
      expect(Fs.readdirSync(directory).filter((name) => name.startsWith("task-"))).toEqual([])
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("generate completes the task it returns; the layer's pollSchedule is the default schedule", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      // A 1-hour default schedule would never end under a live clock: the layer's 1 ms one does.
      const done = yield* Videos.generate({ model: "video-1", prompt: "Clouds" }).pipe(
        Effect.provide(sdkAt(directory, { pollSchedule: Schedule.spaced("1 millis") }))
      )
      expect(done._tag).toBe("Succeeded")
      expect(Fs.readdirSync(directory).filter((name) => name.startsWith("task-"))).toEqual([])
    }).pipe(Effect.provide(Emulator.layer())))
})

describe("stale and wrong tasks", () => {
  it.live("a task submitted with a chat model: the status 404 → TaskNotFoundError with a hint, and the record is gone", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const error = yield* Effect.gen(function*() {
        const taskId = yield* Videos.submit({ model: "gpt-4o-mini", prompt: "Not a video model" })
        expect(taskId).toMatch(/^chatcmpl-/)
        return yield* Effect.flip(Stream.runDrain(Videos.poll(taskId, instant)))
      }).pipe(Effect.provide(sdkAt(directory)))
      expect(error).toMatchObject({
        _tag: "TaskNotFoundError",
        status: 404,
        model: "gpt-4o-mini",
        hint: expect.stringContaining("is --model a video model?")
      })
      expect(Fs.readdirSync(directory).filter((name) => name.startsWith("task-"))).toEqual([])
      // One status call answered 404 drops the task too.
      const once = yield* Effect.gen(function*() {
        const taskId = yield* Videos.submit({ model: "image2", prompt: "Not a video model either" })
        return yield* Effect.flip(Videos.status(taskId))
      }).pipe(Effect.provide(sdkAt(directory)))
      expect(once).toMatchObject({ _tag: "TaskNotFoundError", model: "image2" })
      expect(Fs.readdirSync(directory).filter((name) => name.startsWith("task-"))).toEqual([])
    }).pipe(Effect.provide(Emulator.layer())))

  it("names that are surely not video models, and the rest", () => {
    for (const model of ["gpt-4o-mini", "image2", "text-embedding-3-small", "omni-moderation-latest", "o3-mini"]) {
      expect(Videos.isKnownNonVideoModel(model), model).toBe(true)
    }
    for (const model of ["video-1", "sora-2", "veo-3", "gpt-video-1", "some-new-model"]) {
      expect(Videos.isKnownNonVideoModel(model), model).toBe(false)
    }
  })
})

/** A service on 127.0.0.1 answering every submission with `reply` and every status with `status`; `bodies` are the status requests'. */
const fakeService = (reply: unknown, status: unknown) =>
  Effect.acquireRelease(
    Effect.callback<{ server: Http.Server; url: string; submissions: () => number; bodies: () => ReadonlyArray<string> }>((resume) => {
      let count = 0
      const bodies: Array<string> = []
      const server = Http.createServer((request, response) => {
        let body = ""
        request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
        request.on("end", () => {
          if (request.url?.endsWith("/chat/completions")) count++
          else bodies.push(body)
          response.writeHead(200, { "content-type": "application/json" })
          response.end(JSON.stringify(request.url?.endsWith("/chat/completions") ? reply : status))
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          server,
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          submissions: () => count,
          bodies: () => bodies
        })))
    }),
    ({ server }) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  )

const completion = (id: string) => ({
  id,
  object: "chat.completion",
  created: 0,
  model: "video-1",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }]
})

describe("replies that carry no usable task", () => {
  it.effect("an empty task id is a typed error before anything is journaled", () =>
    Effect.gen(function*() {
      const service = yield* fakeService(completion(" "), {})
      const directory = temporaryDirectory()
      const error = yield* Effect.flip(Videos.submit({ model: "video-1", prompt: "x" })).pipe(
        Effect.provide(NodeSwitchboard.layer({ baseUrl: service.url, apiKey: "sk-test", journalDirectory: directory }))
      )
      expect(error).toMatchObject({ _tag: "ResponseDecodeError", message: "the submission's reply has no task id" })
      expect(Fs.readdirSync(directory).filter((name) => name.startsWith("task-"))).toEqual([])
    }))

  it.effect("a video_url that is not an http(s) URL is a typed error", () =>
    Effect.gen(function*() {
      const service = yield* fakeService(completion("task_1"), { status: "succeed", video_url: "file:///etc/passwd" })
      const error = yield* Effect.flip(Videos.status("task_1")).pipe(
        Effect.provide(NodeSwitchboard.layer({ baseUrl: service.url, apiKey: "sk-test" }))
      )
      expect(error).toMatchObject({ _tag: "ResponseDecodeError", message: expect.stringContaining("not an http(s) URL") })
    }))
})

describe("ids and names that are not valid URI text", () => {
  it.live("a task id with a lone surrogate (valid JSON) is recorded, resumed, and polled with the very same id", () =>
    Effect.gen(function*() {
      const id = "task\ud800x/../\u0000%"
      const service = yield* fakeService(completion(id), { status: "succeed", video_url: "https://cdn.example/v.mp4" })
      const directory = temporaryDirectory()
      const sdk = NodeSwitchboard.layer({ baseUrl: service.url, apiKey: "sk-test", journalDirectory: directory })
      const { taskId, names, resumed } = yield* Effect.gen(function*() {
        const taskId = yield* Videos.submit({ model: "video-1", prompt: "x" })
        const names = Fs.readdirSync(directory)
        const resumed = yield* Videos.resumePending(instant)
        yield* Stream.runDrain(resumed.pending[0]!.updates)
        return { taskId, names, resumed }
      }).pipe(Effect.provide(sdk))
      expect(taskId).toBe(id)
      // Every file stays inside the journal directory, with a name of ASCII characters.
      for (const name of names) expect(name).toMatch(/^[\x21-\x7e]+$/)
      expect(resumed.quarantined).toEqual([])
      expect(resumed.pending.map((p) => p.entry.taskId)).toEqual([id])
      expect(service.bodies().map((body) => JSON.parse(body).task_id)).toEqual([id])
      expect(yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.get(id)).pipe(Effect.provide(NodeTaskJournal.layer(directory))))
        .toMatchObject({ _tag: "Some", value: { taskId: id, videoUrl: "https://cdn.example/v.mp4" } })
    }))

  it.live("an id too long for a file name is journaled under its hash, resumed, claimed and completed", () =>
    Effect.gen(function*() {
      // 300 two-byte letters (1,800 characters encoded), and 200 upper-case ones (600): no file system takes either as a name.
      for (const id of [`task_${"é".repeat(300)}`, `TASK_${"X".repeat(200)}`]) {
        const service = yield* fakeService(completion(id), { status: "succeed", video_url: "https://cdn.example/v.mp4" })
        const directory = temporaryDirectory()
        const sdk = NodeSwitchboard.layer({ baseUrl: service.url, apiKey: "sk-test", journalDirectory: directory })
        expect(yield* Videos.submit({ model: "video-1", prompt: "x" }).pipe(Effect.provide(sdk))).toBe(id)
        for (const name of Fs.readdirSync(directory)) expect(Buffer.byteLength(name)).toBeLessThan(255)
        const { pending, quarantined } = yield* Effect.gen(function*() {
          const resumed = yield* Videos.resumePending(instant)
          // The record and its claim, each under a hashed name, read back by another journal on the directory.
          expect(Fs.readdirSync(directory).filter((name) => name.startsWith("%h"))).toHaveLength(2)
          const look = yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.scan).pipe(Effect.provide(NodeTaskJournal.layer(directory)))
          expect(look).toMatchObject({ entries: [{ taskId: id }], quarantined: [] })
          yield* Stream.runDrain(resumed.pending[0]!.updates)
          return resumed
        }).pipe(Effect.scoped, Effect.provide(sdk))
        expect(quarantined).toEqual([])
        expect(pending.map((p) => p.entry.taskId)).toEqual([id])
        expect(service.bodies().map((body) => JSON.parse(body).task_id)).toEqual([id])
        yield* Videos.complete(id).pipe(Effect.provide(sdk))
        expect(Fs.readdirSync(directory).filter((name) => name.endsWith(".json"))).toEqual([])
      }
    }))

  it.live("a file whose name the journal never writes is set aside and reported; the other tasks are resumed", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const taskId = yield* Videos.submit({ model: "video-1", prompt: "valid" }).pipe(Effect.provide(sdkAt(directory)))
      for (const stray of ["task-%E0%A4%A.json", "claim-%uD800%uDC00.json", "task-%61.json"]) {
        Fs.writeFileSync(Path.join(directory, stray), JSON.stringify({ taskId: "stray", model: "video-1", prompt: "p", submittedAt: 1 }))
      }
      const { pending, quarantined } = yield* Videos.resumePending(instant).pipe(Effect.provide(sdkAt(directory)))
      expect(pending.map((p) => p.entry.taskId)).toEqual([taskId])
      expect(quarantined.map((q) => q.key).sort()).toEqual(["claim-%uD800%uDC00.json", "task-%61.json", "task-%E0%A4%A.json"])
      for (const q of quarantined) expect(Fs.existsSync(q.movedTo)).toBe(true)
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("ids differing only in case keep two records on a case-insensitive file system (macOS, Windows)", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const journal = yield* Effect.provide(TaskJournal.TaskJournal, NodeTaskJournal.layer(directory))
      for (const taskId of ["task_Ab", "task_aB", "task_*"]) yield* journal.record({ taskId, model: "video-1", prompt: "p", submittedAt: 1 })
      const names = Fs.readdirSync(directory)
      // Such a file system keeps one file for names differing only in case; Windows refuses `*`.
      expect(new Set(names.map((name) => name.toLowerCase())).size).toBe(3)
      for (const name of names) expect(name).not.toContain("*")
      expect((yield* journal.list).map((e) => e.taskId).sort()).toEqual(["task_*", "task_Ab", "task_aB"])
    }))

  it.effect("a record an earlier version named by encodeURIComponent alone is found under its id", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const entry = { taskId: "task_Old*", model: "video-1", prompt: "p", submittedAt: 1 }
      Fs.writeFileSync(Path.join(directory, "task-task_Old*.json"), JSON.stringify(entry))
      const journal = yield* Effect.provide(TaskJournal.TaskJournal, NodeTaskJournal.layer(directory))
      expect(yield* journal.scan).toEqual({ entries: [entry], quarantined: [] })
      expect(yield* journal.get("task_Old*")).toMatchObject({ _tag: "Some", value: entry })
      expect(Fs.readdirSync(directory)).toEqual([`${NodeTaskJournal.nameOfKey("task-task_Old*")}.json`])
    }))

  it.effect("a directory or a FIFO under a record's name is set aside and reported, never in the way of the other tasks", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const entry = { taskId: "task_ok", model: "video-1", prompt: "p", submittedAt: 1 }
      record(directory, entry)
      Fs.mkdirSync(Path.join(directory, "task-task_dir.json"))
      ChildProcess.execFileSync("mkfifo", [Path.join(directory, "task-task_fifo.json")])
      const journal = yield* Effect.provide(TaskJournal.TaskJournal, NodeTaskJournal.layer(directory))
      const { entries, quarantined } = yield* journal.scan
      expect(entries).toEqual([entry])
      expect(quarantined.map((q) => q.key).sort()).toEqual(["task-task_dir.json", "task-task_fifo.json"])
      for (const q of quarantined) expect(Fs.existsSync(q.movedTo)).toBe(true)
    }))

  it("file names: any string, lone surrogates included, maps to a name and back", () => {
    for (const key of ["task-a_b", "task-ü/é:*?", "task-\ud800", "task-\udc00\ud800x", "task-\ud83d\ude00", "", "%uD800", "\u0000"]) {
      const name = NodeTaskJournal.nameOfKey(key)
      expect(name).toMatch(/^[\x21-\x7e]*$/)
      expect(NodeTaskJournal.keyOfName(name)).toBe(key)
    }
    for (const name of ["task-%E0%A4%A", "task-%61", "task-A", "task-*", "%uD83D%uDE00", "%ud800", "a b"]) expect(NodeTaskJournal.keyOfName(name)).toBeUndefined()
  })
})

describe("images are paid too", () => {
  it.effect("a dropped connection on image generation is not retried; a 429 is", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Reset" }] })
      const error = yield* Effect.flip(Images.generate({ prompt: "A fox" }))
      expect(error).toMatchObject({ _tag: "TransportError", sent: true })
      expect(yield* submissions).toBe(1)
    }).pipe(Effect.provide(emulated({ retryBaseDelay: 0 }))))

  it.live("a 429 on image generation is retried: it surely was not received", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 429, retryAfterMs: 0 }] })
      const images = yield* Images.generate({ prompt: "A fox" })
      expect(images).toHaveLength(1)
      expect(yield* submissions).toBe(2)
    }).pipe(Effect.provide(emulated({ retryBaseDelay: 0 }))))
})
