import { describe, expect, it } from "@effect/vitest"
import { Images, TaskJournal, Videos } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeMedia, NodeSwitchboard, NodeTaskJournal } from "../src/index.js"
import { driveSpaced, emulated, waitUntil } from "./fixtures.js"

const pngSize = (bytes: Buffer) => {
  expect(bytes.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a")
  return `${bytes.readUInt32BE(16)}x${bytes.readUInt32BE(20)}`
}

const temporaryDirectory = () => mkdtempSync(join(tmpdir(), "switchboard-test-"))
const onePixelPng = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

/** Submissions the emulator received: chat requests with the video model. */
const submissions: Effect.Effect<number, never, Emulator.Emulator> = Effect.map(
  Effect.flatMap(Emulator.Emulator, (e) => e.requests),
  (requests) => requests.filter((r) => r.path === "/v1/chat/completions" && (r.body as { model?: string })?.model === "video-1").length
)

const statusCalls: Effect.Effect<number, never, Emulator.Emulator> = Effect.map(
  Effect.flatMap(Emulator.Emulator, (e) => e.requests),
  (requests) => requests.filter((r) => r.path === "/v1/chat/task/status").length
)

describe("images over HTTP to the emulator", () => {
  it.effect("text-to-image with every option, saved as a valid PNG of the requested size", () =>
    Effect.gen(function*() {
      const images = yield* Images.generate({ prompt: "A red fox", size: "1792x1024", quality: "hd", style: "natural" })
      expect(images).toHaveLength(1)
      expect(images[0]?.alt).toContain("1792x1024, hd, natural")
      const directory = temporaryDirectory()
      const [path] = yield* NodeMedia.saveImages(images, directory, "fox")
      expect(path).toBe(join(directory, "fox-1.png"))
      expect(pngSize(readFileSync(path!))).toBe("1792x1024")
      expect(readdirSync(directory)).toEqual(["fox-1.png"]) // no temporary file left behind
    }).pipe(Effect.provide(Layer.merge(emulated(), NodeMedia.layer))))

  it.effect("saving under names already taken keeps every file: the next free name is used", () =>
    Effect.gen(function*() {
      const images = yield* Images.generate({ prompt: "A red fox" })
      const directory = temporaryDirectory()
      // Three saves at once with the same prefix, as two runs in the same second would do.
      const saved = yield* Effect.all([1, 2, 3].map(() => NodeMedia.saveImages(images, directory, "fox")), { concurrency: "unbounded" })
      expect(saved.flat().sort()).toEqual([join(directory, "fox-1-2.png"), join(directory, "fox-1-3.png"), join(directory, "fox-1.png")].sort())
      expect(readdirSync(directory).sort()).toEqual(["fox-1-2.png", "fox-1-3.png", "fox-1.png"])
      for (const name of readdirSync(directory)) expect(pngSize(readFileSync(join(directory, name)))).toBe("1024x1024")
    }).pipe(Effect.provide(Layer.merge(emulated(), NodeMedia.layer))))

  it.effect("n = 3 gives 3 images, with max_tokens 2000 and image2 sent", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const images = yield* Images.generate({ prompt: "Three boats", n: 3, size: "1024x1792" })
      expect(images).toHaveLength(3)
      expect(new Set(images.map((i) => i.url)).size).toBe(3)
      const [request] = yield* emulator.requests
      expect(request?.body).toMatchObject({ model: "image2", max_tokens: 2000, n: 3, size: "1024x1792" })
    }).pipe(Effect.provide(emulated())))

  it.effect("image-to-image sends a text part and the image part, which arrives intact", () =>
    Effect.gen(function*() {
      const images = yield* Images.transform({ prompt: "Make it blue", image: onePixelPng })
      expect(images).toHaveLength(1)
      expect(images[0]?.alt).toContain("from: Received 1 image: image/png")
    }).pipe(Effect.provide(emulated())))

  it.effect("a reply without an image → NoImageInResponseError carrying the content", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Images.generate({ prompt: "Please refuse this one" }))
      expect(error._tag).toBe("NoImageInResponseError")
      expect((error as { content: string }).content).toContain("I can't create an image")
    }).pipe(Effect.provide(emulated())))

  it.effect("bad options are rejected before sending, naming the field", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const bad = [
        [{ prompt: "x", quality: "ultra" }, "quality must be one of standard, hd"],
        [{ prompt: "x", style: "pop" }, "style must be one of vivid, natural"],
        [{ prompt: "x", n: -1 }, "n must be a positive integer"],
        [{ prompt: "" }, "prompt must not be empty"]
      ] as const
      for (const [request, message] of bad) {
        const error = yield* Effect.flip(Images.generate(request as unknown as Images.GenerateRequest))
        expect(error.message).toBe(message)
      }
      const transform = yield* Effect.flip(Images.transform({ prompt: "x", image: "not-a-url" }))
      expect(transform).toMatchObject({ _tag: "InvalidRequestError", field: "image" })
      expect(yield* emulator.requestCount).toBe(0)
    }).pipe(Effect.provide(emulated())))
})

describe("videos over HTTP to the emulator", () => {
  // 1 s, 2 s, 4 s …: no jitter, so the number of status calls is exact.
  const schedule = Schedule.exponential("1 second")
  const everySecond = Schedule.spaced("1 second")

  it.effect("the poll stream's updates in order, ending in succeed, with the calls the schedule implies", () =>
    Effect.gen(function*() {
      const taskId = yield* Videos.submit({ model: "video-1", prompt: "A calm sea" })
      expect(yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list)).toMatchObject([{ taskId, model: "video-1" }])
      const fiber = yield* Effect.forkChild(Stream.runCollect(Videos.poll(taskId, { schedule })))
      const sleepingUntil = (due: number) => waitUntil(RecordingClock.sleeps, (s) => s.some((t) => t === due))
      yield* sleepingUntil(1000)
      yield* TestClock.adjust("1 second")
      yield* sleepingUntil(3000)
      yield* TestClock.adjust("1999 millis")
      expect(yield* statusCalls).toBe(2)
      yield* TestClock.adjust("1 millis")
      const updates = (yield* Fiber.join(fiber))
      expect(updates.map((u) => (u._tag === "InProgress" ? u.status : u._tag))).toEqual(["queued", "processing", "Succeeded"])
      expect(updates[1]).toMatchObject({ progress: 50 })
      expect(updates[2]).toMatchObject({ _tag: "Succeeded", videoUrl: expect.stringContaining(".mp4") })
      expect(yield* statusCalls).toBe(3)
      // A succeeded task stays in the journal, with its URL, until the caller completes it.
      expect(yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list)).toMatchObject([{ taskId, videoUrl: updates[2]!._tag === "Succeeded" ? updates[2]!.videoUrl : "" }])
      yield* Videos.complete(taskId)
      expect(yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list)).toEqual([])
    }).pipe(Effect.provide(emulated())))

  it.effect("image-to-video sends the image part; generate returns the succeeded update and the video downloads", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const fiber = yield* Effect.forkChild(
        Videos.generate({ model: "video-1", prompt: "Animate it", image: onePixelPng }, { schedule: everySecond })
      )
      const done = yield* driveSpaced(fiber, "1 second")
      const [submission] = yield* emulator.requests
      expect(submission?.body).toMatchObject({
        max_tokens: 3000,
        messages: [{ role: "user", content: [{ type: "text", text: "Animate it" }, { type: "image_url" }] }]
      })
      const path = yield* NodeMedia.save(done.videoUrl, join(temporaryDirectory(), "video.mp4"))
      expect(readFileSync(path).subarray(4, 8).toString()).toBe("ftyp")
    }).pipe(Effect.provide(Layer.merge(emulated(), NodeMedia.layer))))

  it.effect("a failed task → TaskFailedError with the service's reason", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(
        Effect.flip(Videos.generate({ model: "video-1", prompt: "This will fail" }, { schedule: everySecond }))
      )
      const error = yield* driveSpaced(fiber, "1 second")
      expect(error._tag).toBe("TaskFailedError")
      expect((error as { reason?: string }).reason).toBeTruthy()
    }).pipe(Effect.provide(emulated())))

  it.effect("the deadline → TaskTimeoutError, and the task stays in the journal", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(
        Effect.flip(
          Videos.generate({ model: "video-1", prompt: "stuck forever" }, { schedule: Schedule.spaced("10 seconds"), deadline: "55 seconds" })
        )
      )
      const error = yield* driveSpaced(fiber, "10 seconds")
      expect(yield* statusCalls).toBe(6)
      expect(error).toMatchObject({ _tag: "TaskTimeoutError", lastStatus: "processing" })
      expect(yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list)).toHaveLength(1)
    }).pipe(Effect.provide(emulated())))

  it.effect("transient 503s on status calls do not end the poll", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const taskId = yield* Videos.submit({ model: "video-1", prompt: "A calm sea" })
      yield* emulator.setFaults({
        paths: ["/v1/chat/task/status"],
        script: Array.from({ length: 4 }, () => ({ _tag: "Status" as const, status: 503, retryAfter: 1 }))
      })
      // Every wait is 1 s: the poll's, the transport's retry (Retry-After) and the poll's status retry.
      const fiber = yield* Effect.forkChild(Stream.runCollect(Videos.poll(taskId, { schedule: everySecond, statusRetry: everySecond })))
      const updates = (yield* driveSpaced(fiber, "1 second"))
      expect(updates.at(-1)?._tag).toBe("Succeeded")
      expect(yield* statusCalls).toBe(7) // 4 faulted + queued, processing, succeed
    }).pipe(Effect.provide(emulated({ maxRetries: 1 }))))

  it.effect("a connection drop on submission is not retried: one task, not two", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Reset" }] })
      const error = yield* Effect.flip(Videos.submit({ model: "video-1", prompt: "A calm sea" }))
      expect(error).toMatchObject({ _tag: "TransportError", sent: true })
      expect(yield* submissions).toBe(1)
    }).pipe(Effect.provide(emulated())))

  it.effect("a 429 on submission is retried: it surely was not received", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      yield* emulator.setFaults({ script: [{ _tag: "Status", status: 429, retryAfter: 1 }] })
      const fiber = yield* Effect.forkChild(Videos.submit({ model: "video-1", prompt: "A calm sea" }))
      yield* emulator.awaitRequests(1)
      yield* waitUntil(RecordingClock.sleeps, (s) => s.length > 0)
      yield* TestClock.adjust("1 second")
      const taskId = yield* Fiber.join(fiber)
      expect(taskId).toMatch(/^task_/)
      expect(yield* submissions).toBe(2)
    }).pipe(Effect.provide(emulated())))

  it.effect("restart: a task submitted by an interrupted program is resumed by the next one, submitted once", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const journalDirectory = temporaryDirectory()
      const sdk = NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, journalDirectory })

      // Program 1: submits, starts polling, and is interrupted.
      const first = yield* Effect.forkChild(
        Effect.flatMap(Videos.submit({ model: "video-1", prompt: "A slow sunrise" }), (id) =>
          Stream.runDrain(Videos.poll(id, { schedule: everySecond }))).pipe(Effect.provide(sdk))
      )
      yield* waitUntil(statusCalls, (n) => n >= 1)
      yield* Fiber.interrupt(first)

      // Program 2: a fresh layer over the same journal directory.
      const resumed = yield* Effect.forkChild(
        Effect.gen(function*() {
          const { pending } = yield* Videos.resumePending({ schedule: everySecond })
          expect(pending.map((p) => p.entry.prompt)).toEqual(["A slow sunrise"])
          const updates = yield* Stream.runCollect(pending[0]!.updates)
          yield* Videos.complete(pending[0]!.entry.taskId)
          return updates
        }).pipe(Effect.provide(sdk))
      )
      const updates = (yield* driveSpaced(resumed, "1 second"))
      expect(updates.at(-1)?._tag).toBe("Succeeded")
      expect(yield* submissions).toBe(1)
      const afterwards = yield* Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list).pipe(
        Effect.provide(NodeTaskJournal.layer(journalDirectory))
      )
      expect(afterwards).toEqual([])
    }).pipe(Effect.provide(Layer.merge(Emulator.layer(), RecordingClock.layer))))

  it.effect("submission input is validated before sending", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const error = yield* Effect.flip(Videos.submit({ model: "video-1", prompt: "" }))
      expect(error).toMatchObject({ _tag: "InvalidRequestError", message: "prompt must not be empty" })
      expect(yield* emulator.requestCount).toBe(0)
    }).pipe(Effect.provide(emulated())))
})
