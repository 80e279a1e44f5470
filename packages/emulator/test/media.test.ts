import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Emulator from "../src/Emulator.js"
import * as Protocol from "@switchboard/core/Protocol"
import { call, chat, completion, decode, errorOf, message } from "./utils.js"

const run = Effect.provide(Emulator.layer())

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII="

const links = (content: string) => [...content.matchAll(/!\[([^\]]*)\]\(([^)]+)\)/g)].map((m) => ({ alt: m[1]!, url: m[2]! }))

const download = (url: string) =>
  Effect.tryPromise(async () => {
    const response = await fetch(url)
    return { status: response.status, type: response.headers.get("content-type"), bytes: Buffer.from(await response.arrayBuffer()) }
  })

describe("image generation with image2", () => {
  it.effect("answers with markdown links to PNGs of the requested size, served without a key", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const body = { model: "image2", size: "1792x1024", n: 2, messages: [{ role: "user", content: "A red fox" }] }
      const reply = yield* chat(body)
      expect(reply.status).toBe(200)
      const images = links(message(reply).content ?? "")
      expect(images).toHaveLength(2)
      expect(images[0]!.url.startsWith(`${emulator.url}/files/img_`)).toBe(true)
      expect(images[0]!.url).not.toBe(images[1]!.url)
      expect(images[0]!.alt).toContain(`for "A red fox" (1792x1024, standard)`)
      expect(message(yield* chat(body)).content).toBe(message(reply).content)
      const file = yield* download(images[0]!.url)
      expect(file.status).toBe(200)
      expect(file.type).toBe("image/png")
      expect(file.bytes.subarray(1, 4).toString("ascii")).toBe("PNG")
      expect([file.bytes.readUInt32BE(16), file.bytes.readUInt32BE(20)]).toEqual([1792, 1024])
      expect((yield* download(`${emulator.url}/files/nothing.png`)).status).toBe(404)
    }).pipe(run))

  it.effect("describes the source image of image-to-image", () =>
    Effect.gen(function*() {
      const reply = yield* chat({
        model: "image2",
        messages: [{
          role: "user",
          content: [{ type: "text", text: "Make it blue" }, { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }]
        }]
      })
      expect(links(message(reply).content ?? "")[0]!.alt).toContain("from: Received 1 image: image/png 68 bytes (data URI).")
      const invalid = yield* chat({ model: "image2", size: "5x5", messages: [{ role: "user", content: "x" }] })
      expect(invalid.status).toBe(400)
      expect(errorOf(invalid).param).toBe("size")
    }).pipe(run))
})

describe("video tasks with video-1", () => {
  const poll = (taskId: string) =>
    Effect.map(call("/v1/chat/task/status", { body: { task_id: taskId } }), (reply) => decode(Protocol.TaskStatusResponse, reply))

  it.effect("submits a task and moves it one poll at a time to succeed", () =>
    Effect.gen(function*() {
      const submitted = yield* chat({ model: "video-1", max_tokens: 3000, messages: [{ role: "user", content: "A cat surfing" }] })
      const taskId = completion(submitted).id
      expect(taskId).toMatch(/^task_/)
      expect(message(submitted).content).toContain(taskId)
      const statuses = [yield* poll(taskId), yield* poll(taskId), yield* poll(taskId)]
      expect(statuses.map((s) => s.status)).toEqual(["queued", "processing", "succeed"])
      expect(statuses.map((s) => s.progress)).toEqual([0, 50, 100])
      const video = yield* download(statuses[2]!.video_url!)
      expect(video.type).toBe("video/mp4")
      expect(video.bytes.subarray(4, 8).toString("ascii")).toBe("ftyp")
      expect((yield* poll(taskId)).status).toBe("succeed")
    }).pipe(run))

  it.effect("fails a task whose prompt says fail, and rejects unknown or missing task ids", () =>
    Effect.gen(function*() {
      const submitted = yield* chat({ model: "video-1", messages: [{ role: "user", content: "Please fail this one" }] })
      const taskId = completion(submitted).id
      yield* poll(taskId)
      yield* poll(taskId)
      const failed = yield* poll(taskId)
      expect(failed.status).toBe("failed")
      expect(failed.video_url).toBeUndefined()
      const unknown = yield* call("/v1/chat/task/status", { body: { task_id: "task_nope" } })
      expect(unknown.status).toBe(404)
      expect(errorOf(unknown)).toMatchObject({ code: "task_not_found", param: "task_id" })
      const missing = yield* call("/v1/chat/task/status", { body: {} })
      expect(missing.status).toBe(400)
      expect(errorOf(missing).param).toBe("task_id")
    }).pipe(run))
})
