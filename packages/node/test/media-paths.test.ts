/**
 * Where saved media lands (issue 26): a task id or a prefix never becomes a
 * path out of its directory, a save never replaces a file, temporary files
 * are created exclusively under names nobody can predict, and a download
 * that never starts or stalls ends at its limit, leaving nothing. Downloads
 * cross real HTTP to a `node:http` server; files are real.
 */
import { describe, expect, it } from "@effect/vitest"
import * as TaskPoller from "@switchboard/core/TaskPoller"
import * as RecordingClock from "@switchboard/test-support/RecordingClock"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Duration from "effect/Duration"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/testing/TestClock"
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { NodeMedia } from "../src/index.js"
import { waitUntil } from "./fixtures.js"
import { type Hostile, sdk, serve } from "./hostile.js"

const temporaryDirectory = () => mkdtempSync(join(tmpdir(), "switchboard-paths-"))
const video = Buffer.from("00000018667479706d703432", "hex")

/** A host serving `video` as video/mp4 at any path. */
const videoHost = serve((_request, response) => {
  response.writeHead(200, { "content-type": "video/mp4" })
  response.end(video)
})

/** The SDK (its journal in memory) and saving, for `saveVideo`. */
const withSdk = (host: Hostile) => Layer.merge(Layer.orDie(sdk(host)), NodeMedia.layer)

/** Lets `after` pass once a sleep due exactly then is pending: the limit being watched has started. */
const passWhenWaiting = (after: Duration.Input) =>
  Effect.gen(function*() {
    const due = (yield* Clock.currentTimeMillis) + Duration.toMillis(after)
    yield* waitUntil(RecordingClock.sleeps, (sleeps) => sleeps.some((t) => t === due))
    yield* TestClock.adjust(after)
  })

const succeeded = (taskId: string, videoUrl: string) => TaskPoller.TaskUpdate.Succeeded({ taskId, videoUrl })

describe("NodeMedia.safeFileName", () => {
  it("keeps a plain name, reduces anything else to letters, digits, '.', '_' and '-' inside one name", () => {
    expect(NodeMedia.safeFileName("task_01-ab.c", "video")).toBe("task_01-ab.c")
    expect(NodeMedia.safeFileName("../../escaped/owned", "video")).toBe("escaped-owned")
    expect(NodeMedia.safeFileName("..\\..\\win", "video")).toBe("win")
    expect(NodeMedia.safeFileName("a\0b\nc:d*e", "video")).toBe("a-b-c-d-e")
    expect(NodeMedia.safeFileName("..", "video")).toBe("video")
    expect(NodeMedia.safeFileName("", "video")).toBe("video")
    expect(NodeMedia.safeFileName("-rf", "video")).toBe("rf")
    expect(NodeMedia.safeFileName("CON", "video")).toBe("CON_")
    expect(NodeMedia.safeFileName("x".repeat(10_000), "video")).toHaveLength(100)
  })
})

describe("NodeMedia.saveVideo: the task id is the service's", () => {
  it.live("a task id that is a path: the video lands inside its directory under a safe name", () =>
    Effect.scoped(Effect.gen(function*() {
      const host = yield* videoHost
      const root = temporaryDirectory()
      const directory = join(root, "a", "b", "out")
      const path = yield* NodeMedia.saveVideo(succeeded("../../escaped/owned", `${host.url}/v.mp4`), directory).pipe(
        Effect.provide(withSdk(host))
      )
      expect(path).toBe(join(directory, "escaped-owned.mp4"))
      expect(readFileSync(path)).toEqual(video)
      expect(readdirSync(join(root, "a"))).toEqual(["b"])
      expect(readdirSync(join(root, "a", "b"))).toEqual(["out"])
      expect(readdirSync(directory)).toEqual(["escaped-owned.mp4"])
    })))

  it.live("a video never replaces an existing file: it takes the next free name", () =>
    Effect.scoped(Effect.gen(function*() {
      const host = yield* videoHost
      const directory = temporaryDirectory()
      writeFileSync(join(directory, "victim.mp4"), "mine")
      const path = yield* NodeMedia.saveVideo(succeeded("victim", `${host.url}/v.mp4`), directory).pipe(
        Effect.provide(withSdk(host))
      )
      expect(path).toBe(join(directory, "victim-2.mp4"))
      expect(readFileSync(join(directory, "victim.mp4"), "utf8")).toBe("mine")
      expect(readFileSync(path)).toEqual(video)
    })))
})

describe("NodeMedia.save", () => {
  it.live("never replaces an existing file: it takes the next free name and returns it", () =>
    Effect.scoped(Effect.gen(function*() {
      const host = yield* videoHost
      const directory = temporaryDirectory()
      const target = join(directory, "boat.mp4")
      writeFileSync(target, "mine")
      const path = yield* NodeMedia.save(`${host.url}/v.mp4`, target)
      expect(path).toBe(join(directory, "boat-2.mp4"))
      expect(readFileSync(target, "utf8")).toBe("mine")
      expect(readdirSync(directory).sort()).toEqual(["boat-2.mp4", "boat.mp4"])
    }).pipe(Effect.provide(NodeMedia.layer))))

  it.live("saving the same bytes again makes no copy; a link to the same bytes is not taken for the file", () =>
    Effect.scoped(Effect.gen(function*() {
      const host = yield* videoHost
      const directory = temporaryDirectory()
      const first = yield* NodeMedia.save(`${host.url}/v.mp4`, join(directory, "v.mp4"))
      const again = yield* NodeMedia.save(`${host.url}/v.mp4`, join(directory, "v.mp4"))
      expect(again).toBe(first)
      expect(readdirSync(directory)).toEqual(["v.mp4"])
      const elsewhere = join(temporaryDirectory(), "same.mp4")
      writeFileSync(elsewhere, video)
      symlinkSync(elsewhere, join(directory, "w.mp4"))
      const beside = yield* NodeMedia.save(`${host.url}/v.mp4`, join(directory, "w.mp4"))
      expect(beside).toBe(join(directory, "w-2.mp4"))
      expect(lstatSync(beside).isFile()).toBe(true)
    }).pipe(Effect.provide(NodeMedia.layer))))

  it.live("a symlink planted under any name the temporary file could predictably have redirects nothing", () =>
    Effect.scoped(Effect.gen(function*() {
      const host = yield* videoHost
      const directory = temporaryDirectory()
      const elsewhere = join(temporaryDirectory(), "precious")
      writeFileSync(elsewhere, "precious")
      const path = join(directory, "v.mp4")
      // The names a writer of this process could pick from its pid, a counter or the time.
      const now = Date.now()
      const planted = [
        ...Array.from({ length: 2000 }, (_, i) => `${path}.${process.pid}.${i}.part`),
        ...Array.from({ length: 3000 }, (_, i) => `${path}.${process.pid}.${now + i}.part`)
      ]
      for (const name of planted) symlinkSync(elsewhere, name)
      const saved = yield* NodeMedia.save(`${host.url}/v.mp4`, path)
      expect(readFileSync(elsewhere, "utf8")).toBe("precious")
      expect(lstatSync(saved).isFile()).toBe(true)
      expect(readFileSync(saved)).toEqual(video)
      // Nothing but the planted links and the file.
      expect(readdirSync(directory).length).toBe(planted.length + 1)
    }).pipe(Effect.provide(NodeMedia.layer))))

  it.live("images under a prefix that is a path stay inside their directory", () =>
    Effect.gen(function*() {
      const root = temporaryDirectory()
      const directory = join(root, "out")
      mkdirSync(directory)
      const [path] = yield* NodeMedia.saveImages(
        [{ url: "data:image/png;base64,AAAA", mediaType: "image/png" }],
        directory,
        "../../escaped"
      )
      expect(dirname(path!)).toBe(directory)
      expect(basename(path!)).toBe("escaped-1.png")
      expect(readdirSync(root)).toEqual(["out"])
    }).pipe(Effect.provide(NodeMedia.layer)))

  it.live("a media type named like a member of Object.prototype chooses no extension: .img", () =>
    Effect.gen(function*() {
      const directory = temporaryDirectory()
      const images = ["constructor", "toString", "__proto__"].map((mediaType) => ({ url: "data:image/png;base64,AAAA", mediaType }))
      const paths = yield* NodeMedia.saveImages(images, directory, "odd")
      expect(paths.map((path) => basename(path))).toEqual(["odd-1.img", "odd-2.img", "odd-3.img"])
    }).pipe(Effect.provide(NodeMedia.layer)))
})

describe("download limits", () => {
  it.effect("a server that accepts and never answers: TimeoutError (first-byte) after 60 s, nothing written", () =>
    Effect.scoped(Effect.gen(function*() {
      let received: () => void = () => {}
      const asked = new Promise<void>((resolve) => (received = resolve))
      const host = yield* serve(() => received())
      const directory = temporaryDirectory()
      const fiber = yield* Effect.forkChild(Effect.flip(NodeMedia.save(`${host.url}/v.mp4`, join(directory, "v.mp4"))))
      yield* Effect.promise(() => asked)
      yield* passWhenWaiting("60 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "first-byte" })
      expect(readdirSync(directory)).toEqual([])
    }).pipe(Effect.provide(Layer.merge(NodeMedia.layer, RecordingClock.layer)))))

  it.effect("a body that stops coming: TimeoutError (idle) after idleTimeout, nothing written", () =>
    Effect.scoped(Effect.gen(function*() {
      let started: () => void = () => {}
      const begun = new Promise<void>((resolve) => (started = resolve))
      const host = yield* serve((_request, response) => {
        response.writeHead(200, { "content-type": "video/mp4" })
        response.write(video)
        started()
      })
      const directory = temporaryDirectory()
      const fiber = yield* Effect.forkChild(
        Effect.flip(NodeMedia.save(`${host.url}/v.mp4`, join(directory, "v.mp4"), { idleTimeout: "5 seconds" }))
      )
      yield* Effect.promise(() => begun)
      yield* passWhenWaiting("5 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "TimeoutError", phase: "idle" })
      expect(readdirSync(directory)).toEqual([])
    }).pipe(Effect.provide(Layer.merge(NodeMedia.layer, RecordingClock.layer)))))

  it.live("a negative limit is a ConfigurationError naming it, nothing fetched", () =>
    Effect.scoped(Effect.gen(function*() {
      const host = yield* videoHost
      const directory = temporaryDirectory()
      for (const field of ["timeout", "firstByteTimeout", "idleTimeout"] as const) {
        const error = yield* Effect.flip(NodeMedia.save(`${host.url}/v.mp4`, join(directory, "v.mp4"), { [field]: -1 }))
        expect(error).toMatchObject({ _tag: "ConfigurationError", field })
      }
      expect(host.requests()).toBe(0)
      expect(readdirSync(directory)).toEqual([])
    }).pipe(Effect.provide(NodeMedia.layer))))
})
