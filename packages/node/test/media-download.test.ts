/**
 * `NodeMedia.save` downloads over Node's `fetch`, across real HTTP to a
 * `node:http` server on 127.0.0.1: the bytes arrive whole, a failed or
 * cut-off download is a typed error, and no file (whole or partial) is left.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as zlib from "node:zlib"
import { NodeMedia } from "../src/index.js"

const video = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => i % 251))

const closed = (server: http.Server) =>
  Effect.callback<void>((resume) => {
    server.close(() => resume(Effect.void))
    // Endless bodies and keep-alive sockets would hold close() for seconds.
    server.closeAllConnections()
  })

/**
 * `/video.mp4` whole, `/missing.mp4` 404, `/cut.mp4` dropped after a third of
 * its declared length, `/proxied.mp4` the same behind a compressing proxy.
 */
const mediaServer = Effect.acquireRelease(
  Effect.callback<http.Server & { readonly base: string }>((resume) => {
    const server = http.createServer((req, res) => {
      if (req.url === "/video.mp4") {
        res.writeHead(200, { "content-type": "video/mp4", "content-length": video.length })
        res.end(video)
      } else if (req.url === "/endless.mp4") {
        // Bytes for as long as the client reads, without a length.
        res.writeHead(200, { "content-type": "video/mp4" })
        const more = () => {
          while (res.write(video)) if (res.destroyed) return
        }
        res.on("drain", more)
        more()
      } else if (req.url === "/declared-huge.mp4") {
        res.writeHead(200, { "content-type": "video/mp4", "content-length": String(2 ** 40) })
        res.write(video)
      } else if (req.url === "/proxied.mp4") {
        // A compressing proxy whose upstream is cut after a third. Asked for
        // gzip, it has no length to send on and ends its gzip stream (flushed,
        // without the trailer) as if whole; asked for the bytes as they are,
        // it sends the upstream's length on.
        const part = video.subarray(0, video.length / 3)
        if (/gzip/.test(req.headers["accept-encoding"] ?? "")) {
          res.writeHead(200, { "content-type": "video/mp4", "content-encoding": "gzip" })
          const gzip = zlib.createGzip()
          gzip.on("data", (chunk: Buffer) => res.write(chunk))
          gzip.write(part, () => gzip.flush(() => res.end()))
        } else {
          res.writeHead(200, { "content-type": "video/mp4", "content-length": video.length })
          res.write(part, () => res.destroy())
        }
      } else if (req.url === "/cut.mp4") {
        res.writeHead(200, { "content-type": "video/mp4", "content-length": video.length })
        res.write(video.subarray(0, video.length / 3), () => res.destroy())
      } else {
        res.writeHead(404, { "content-type": "text/plain" })
        res.end("no such file")
      }
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed(Object.assign(server, { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }))))
  }),
  (server) => closed(server)
)

const temporaryDirectory = () => mkdtempSync(join(tmpdir(), "switchboard-download-"))

describe("NodeMedia downloads over HTTP", () => {
  it.effect("a whole download is saved byte for byte", () =>
    Effect.gen(function*() {
      const { base } = yield* mediaServer
      const directory = temporaryDirectory()
      const path = yield* NodeMedia.save(`${base}/video.mp4`, join(directory, "clip.mp4"))
      expect(path).toBe(join(directory, "clip.mp4"))
      expect(readFileSync(path).equals(video)).toBe(true)
      expect(readdirSync(directory)).toEqual(["clip.mp4"])
    }).pipe(Effect.provide(NodeMedia.layer)))

  it.effect("a download that never ends stops at maxBytes: ResponseTooLargeError, and no file", () =>
    Effect.gen(function*() {
      const { base } = yield* mediaServer
      const directory = temporaryDirectory()
      const error = yield* Effect.flip(NodeMedia.save(`${base}/endless.mp4`, join(directory, "clip.mp4"), { maxBytes: 1024 * 1024 }))
      expect(error).toMatchObject({ _tag: "ResponseTooLargeError", limit: 1024 * 1024 })
      expect(readdirSync(directory)).toEqual([])
    }).pipe(Effect.provide(NodeMedia.layer)))

  it.effect("a download whose content-length is past maxBytes is refused at its headers", () =>
    Effect.gen(function*() {
      const { base } = yield* mediaServer
      const directory = temporaryDirectory()
      const error = yield* Effect.flip(NodeMedia.save(`${base}/declared-huge.mp4`, join(directory, "clip.mp4")))
      expect(error).toMatchObject({ _tag: "ResponseTooLargeError", limit: NodeMedia.defaultMaxBytes })
      expect(readdirSync(directory)).toEqual([])
    }).pipe(Effect.provide(NodeMedia.layer)))

  it("maxBytes below 1 is a ConfigurationError naming it", () =>
    Effect.runPromise(Effect.flip(NodeMedia.save("https://example.invalid/x.mp4", "x.mp4", { maxBytes: 0 })).pipe(
      Effect.provide(NodeMedia.layer),
      Effect.map((error) => expect(error).toMatchObject({ _tag: "ConfigurationError", field: "maxBytes" }))
    )))

  it.effect("a download answered 404 → NotFoundError with the status, and no file", () =>
    Effect.gen(function*() {
      const { base } = yield* mediaServer
      const directory = temporaryDirectory()
      const error = yield* Effect.flip(NodeMedia.save(`${base}/missing.mp4`, join(directory, "clip.mp4")))
      expect(error._tag).toBe("NotFoundError")
      expect(error.message).toContain("HTTP 404")
      expect(readdirSync(directory)).toEqual([])
    }).pipe(Effect.provide(NodeMedia.layer)))

  const cuts = [
    ["/cut.mp4", "mid-body"],
    // The bytes are asked for as they are: gzip would hide the cut.
    ["/proxied.mp4", "behind a compressing proxy"]
  ] as const
  for (const [path, where] of cuts) {
    it.effect(`a download cut off ${where} → TransportError, and no file, not even a partial one`, () =>
      Effect.gen(function*() {
        const { base } = yield* mediaServer
        const directory = temporaryDirectory()
        const error = yield* Effect.flip(NodeMedia.save(`${base}${path}`, join(directory, "clip.mp4")))
        expect(error._tag).toBe("TransportError")
        expect(error.message).toContain("cut off")
        expect(readdirSync(directory)).toEqual([])
      }).pipe(Effect.provide(NodeMedia.layer)))
  }

  it.effect("a server that refuses the connection → TransportError naming the download", () =>
    Effect.gen(function*() {
      const server = yield* mediaServer
      const base = server.base
      yield* closed(server)
      const directory = temporaryDirectory()
      const error = yield* Effect.flip(NodeMedia.save(`${base}/video.mp4`, join(directory, "clip.mp4")))
      expect(error._tag).toBe("TransportError")
      expect(error.message).toBe(`download of ${base}/video.mp4 failed`)
      expect(readdirSync(directory)).toEqual([])
    }).pipe(Effect.provide(NodeMedia.layer)))
})
