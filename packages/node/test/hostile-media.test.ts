/**
 * Saving media from a hostile host (issue 14): a redirect is followed
 * without any key, a page is never saved as a video, and a download that
 * never ends is bounded. Nothing half-written is left behind.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeMedia } from "../src/index.js"
import { serve } from "./hostile.js"

const directory = () => mkdtempSync(join(tmpdir(), "switchboard-media-"))
const video = Buffer.from("00000018667479706d703432", "hex")

describe("NodeMedia.save against a hostile host", () => {
  it.live("follows a redirect, sends no key, saves the media", () =>
    Effect.scoped(Effect.gen(function*() {
      const authorizations: Array<string | undefined> = []
      const server = yield* serve((request, response) => {
        authorizations.push(request.headers["authorization"])
        if (request.url === "/v.mp4") {
          response.writeHead(302, { location: "/cdn/v.mp4" })
          return response.end("<html>moved</html>")
        }
        response.writeHead(200, { "content-type": "video/mp4" })
        response.end(video)
      })
      const dir = directory()
      const path = yield* NodeMedia.save(`${server.url}/v.mp4`, join(dir, "v.mp4"))
      expect(readFileSync(path)).toEqual(video)
      expect(server.requests()).toBe(2)
      expect(authorizations).toEqual([undefined, undefined])
    }).pipe(Effect.provide(NodeMedia.layer))))

  it.live("a 200 text/html page or a JSON error body is not saved as media", () =>
    Effect.scoped(Effect.gen(function*() {
      for (const [type, body] of [["text/html; charset=utf-8", "<html>Sign in</html>"], ["application/json", `{"error":"expired"}`]]) {
        const server = yield* serve((_request, response) => {
          response.writeHead(200, { "content-type": type! })
          response.end(body)
        })
        const dir = directory()
        const error = yield* Effect.flip(NodeMedia.save(`${server.url}/v.mp4`, join(dir, "v.mp4")))
        expect(error).toMatchObject({ _tag: "ResponseDecodeError", message: expect.stringContaining("not media") })
        expect(readdirSync(dir)).toEqual([])
      }
    }).pipe(Effect.provide(NodeMedia.layer))))

  it.effect("a download that never ends fails at its time limit, leaving nothing", () =>
    Effect.scoped(Effect.gen(function*() {
      let started: () => void = () => {}
      const begun = new Promise<void>((resolve) => (started = resolve))
      const server = yield* serve((_request, response) => {
        response.writeHead(200, { "content-type": "video/mp4" })
        response.write(video)
        started()
      })
      const dir = directory()
      const fiber = yield* Effect.forkChild(Effect.flip(NodeMedia.save(`${server.url}/v.mp4`, join(dir, "v.mp4"), { timeout: "30 seconds" })))
      yield* Effect.promise(() => begun)
      yield* TestClock.adjust("30 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "TimeoutError" })
      expect(readdirSync(dir)).toEqual([])
    }).pipe(Effect.provide(NodeMedia.layer))))

  it.live("a directory that cannot be made (under /proc) fails at once with a SaveError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(NodeMedia.save("data:image/png;base64,AAAA", "/proc/nope/a/x.png"))
      expect(error).toMatchObject({ _tag: "SaveError", path: "/proc/nope/a/x.png" })
    }).pipe(Effect.provide(NodeMedia.layer)))
})
