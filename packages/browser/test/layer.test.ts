/**
 * The browser layer without a browser: Node has `fetch`, `Blob` and `File`,
 * so the guard, the journal choice, attachments and the fetch transport
 * (streaming included) are checked here against the emulator in process.
 * `browser.test.ts` runs the same in Chromium.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, Switchboard, TaskJournal } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { json, serve } from "@switchboard/test-support/Hostile"
import { BrowserAttachment, BrowserSwitchboard, BrowserTaskJournal } from "../src/index.js"

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 1, 2, 3])

const build = (options: BrowserSwitchboard.Options) => Effect.scoped(Layer.build(BrowserSwitchboard.layer(options)))

/** A `Storage` in a Map, standing for a page's `localStorage` across reloads. */
const fakeStorage = (): Storage => {
  const items = new Map<string, string>()
  return {
    get length() {
      return items.size
    },
    clear: () => items.clear(),
    getItem: (key) => items.get(key) ?? null,
    key: (i) => [...items.keys()][i] ?? null,
    removeItem: (key) => void items.delete(key),
    setItem: (key, value) => void items.set(key, String(value))
  }
}

const withLocalStorage = <A, E, R>(storage: Storage, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => Object.defineProperty(globalThis, "localStorage", { value: storage, configurable: true })),
    () => effect,
    () => Effect.sync(() => delete (globalThis as { localStorage?: unknown }).localStorage)
  )

describe("the key guard", () => {
  it.effect("refuses a key given as a string, as Redacted, or as an authorization header", () =>
    Effect.gen(function*() {
      for (
        const [options, where] of [
          [{ baseUrl: "https://api.example", apiKey: "sk-secret-123" }, "apiKey"],
          [{ baseUrl: "https://api.example", apiKey: Redacted.make("sk-secret-123") }, "apiKey"],
          [{ baseUrl: "https://api.example", headers: { AUTHORIZATION: "Bearer sk-secret-123" } }, "headers.authorization"]
        ] as const
      ) {
        const error = yield* Effect.flip(build(options))
        expect(error._tag).toBe("ApiKeyInBrowserError")
        expect(BrowserSwitchboard.isApiKeyInBrowserError(error)).toBe(true)
        expect(error).toMatchObject({ where })
        expect(error.message).toContain("same-origin proxy")
        expect(error.message).toContain("docs/browser.md")
        expect(error.message).not.toContain("sk-secret-123")
        expect(String(error)).not.toContain("sk-secret-123")
      }
    }))

  // One rule with the redaction (issue 33, case 12): a header whose value the
  // SDK hides from errors is one a page must not send. A server echoes the
  // headers it got in a 401, as gateways do: what the guard refuses, the errors hide.
  it.live("refuses every header the transport redacts as a secret (x-api-key, api-key, …), and only those", () =>
    Effect.scoped(Effect.gen(function*() {
      const echo = yield* serve((request, response) =>
        json(response, 401, { error: { message: `bad credentials: ${JSON.stringify(request.headers)}` } }))
      const secrets = ["x-api-key", "api-key", "X-API-KEY", "x-auth-token", "proxy-authorization", "x-client-secret", "x-session-id", "x-password"]
      for (const name of secrets) {
        const headers = { [name]: "sk-page-secret-123" }
        for (const layer of [BrowserSwitchboard.layer, BrowserSwitchboard.layerChat]) {
          const error = yield* Effect.flip(Effect.scoped(Layer.build(layer({ baseUrl: echo.url, headers }))))
          expect(error, name).toMatchObject({ _tag: "ApiKeyInBrowserError", where: `headers.${name.toLowerCase()}` })
          expect(String(error)).not.toContain("sk-page-secret-123")
        }
        const allowed = BrowserSwitchboard.layer({ baseUrl: echo.url, headers, allowApiKeyInBrowser: true, maxRetries: 0 })
        const refused = yield* Effect.flip(Effect.provide(Chat.create({ model: "m", messages: [{ role: "user", content: "Hi" }] }), allowed))
        expect(refused, name).toMatchObject({ _tag: "AuthenticationError" })
        expect(refused.message, name).toContain("[redacted]")
        expect(refused.message, name).not.toContain("sk-page-secret-123")
      }
      // Headers that carry no secret are the page's to send.
      yield* build({ baseUrl: echo.url, headers: { "x-team": "a", "x-request-source": "page" } })
      expect(echo.requests()).toBe(secrets.length)
    })))

  // Issue 33, case 12's class: a secret header given per call leaves the page
  // as surely as one in the layer's options. Every call refuses it, whole or
  // streamed, in both layers, before anything reaches the server.
  it.live("refuses a secret header given per call (withRequestOptions), before anything is sent, unless allowed", () =>
    Effect.scoped(Effect.gen(function*() {
      const seen: Array<string | undefined> = []
      const echo = yield* serve((request, response) => {
        seen.push(request.headers["x-api-key"] as string | undefined)
        json(response, 401, { error: { message: "bad credentials" } })
      })
      const request = { model: "m", messages: [{ role: "user" as const, content: "Hi" }] }
      const secrets = ["x-api-key", "Api-Key", "x-auth-token", "cookie", "x-session-id"]
      for (const name of secrets) {
        const options = { headers: { "x-team": "a", [name]: "sk-page-secret-123" } }
        for (const layer of [BrowserSwitchboard.layer, BrowserSwitchboard.layerChat]) {
          const services = layer({ baseUrl: echo.url, maxRetries: 0 })
          const whole = yield* Effect.flip(Effect.provide(Switchboard.withRequestOptions(Chat.create(request), options), services))
          const streamed = yield* Effect.flip(
            Effect.provide(Stream.runDrain(Switchboard.withRequestOptions(Chat.streamText(request), options)), services)
          )
          for (const error of [whole, streamed]) {
            expect(error, name).toMatchObject({ _tag: "ConfigurationError", field: `requestOptions.headers.${name.toLowerCase()}` })
            expect(error.message, name).toContain("same-origin proxy")
            expect(error.message, name).toContain("allowApiKeyInBrowser: true")
            expect(String(error), name).not.toContain("sk-page-secret-123")
          }
        }
      }
      expect(echo.requests()).toBe(0)
      // Headers that carry no secret go; with allowApiKeyInBrowser the secret one goes too.
      const plain = yield* Effect.flip(Effect.provide(
        Switchboard.withRequestOptions(Chat.create(request), { headers: { "x-team": "a" } }),
        BrowserSwitchboard.layer({ baseUrl: echo.url, maxRetries: 0 })
      ))
      expect(plain).toMatchObject({ _tag: "AuthenticationError" })
      const allowed = yield* Effect.flip(Effect.provide(
        Switchboard.withRequestOptions(Chat.create(request), { headers: { "x-api-key": "sk-page-secret-123" } }),
        BrowserSwitchboard.layer({ baseUrl: echo.url, maxRetries: 0, allowApiKeyInBrowser: true })
      ))
      expect(allowed).toMatchObject({ _tag: "AuthenticationError" })
      expect(seen).toEqual([undefined, "sk-page-secret-123"])
    })))

  it.effect("lets a page without a key, or one that allows it explicitly, through", () =>
    Effect.gen(function*() {
      yield* BrowserSwitchboard.checkApiKey({ baseUrl: "https://api.example" })
      yield* BrowserSwitchboard.checkApiKey({ baseUrl: "https://api.example", apiKey: "" })
      yield* BrowserSwitchboard.checkApiKey({ baseUrl: "https://api.example", apiKey: "sk-local", allowApiKeyInBrowser: true })
      yield* build({ baseUrl: "https://api.example", apiKey: "sk-local", allowApiKeyInBrowser: true })
    }))

  it.effect("fails before any request is sent", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const error = yield* Effect.flip(
        Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).pipe(
          Effect.provide(BrowserSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
        )
      )
      expect(error._tag).toBe("ApiKeyInBrowserError")
      expect(yield* emulator.requestCount).toBe(0)
    }).pipe(Effect.provide(Emulator.layer())))

  it.effect("a bad baseUrl is a ConfigurationError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(build({ baseUrl: "ftp://nowhere" }))
      expect(error).toMatchObject({ _tag: "ConfigurationError", field: "baseUrl" })
    }))
})

describe("the fetch layer", () => {
  const overEmulator = Layer.unwrap(
    Effect.map(Emulator.Emulator, (emulator) =>
      BrowserSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, allowApiKeyInBrowser: true }))
  ).pipe(Layer.provideMerge(Emulator.layer()))

  it.effect("calls and streams", () =>
    Effect.gen(function*() {
      const messages = [{ role: "user" as const, content: "Hello over fetch" }]
      const completion = yield* Chat.create({ model: "gpt-4o-mini", messages })
      const deltas = yield* Stream.runCollect(Chat.streamText({ model: "gpt-4o-mini", messages }))
      expect(deltas.length).toBeGreaterThan(1)
      expect(deltas.join("")).toBe(completion.choices[0]?.message.content)
    }).pipe(Effect.provide(overEmulator)))

  it.effect("a JSON call's metadata has its time to first byte, at most the total (the wire reports the head)", () =>
    Effect.gen(function*() {
      const messages = [{ role: "user" as const, content: "Hello over fetch" }]
      const [, response] = yield* Switchboard.withResponse(Chat.create({ model: "gpt-4o-mini", messages }))
      expect(response.timings.firstByte).toBeDefined()
      expect(Duration.isLessThanOrEqualTo(response.timings.firstByte!, response.timings.total)).toBe(true)
    }).pipe(Effect.provide(overEmulator)))
})

describe("nested layers", () => {
  // Effect 4 memoizes layers by reference across nested `Effect.provide`s.
  it.effect("a layer provided inside another uses its own options, not the outer one's", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "inner" }] }
      const own = { baseUrl: emulator.url, apiKey: emulator.apiKey, allowApiKeyInBrowser: true }
      const unreachable = { baseUrl: "http://127.0.0.1:9", maxRetries: 0 }
      for (const make of [BrowserSwitchboard.layer, BrowserSwitchboard.layerChat]) {
        const completion = yield* Chat.create(request).pipe(Effect.provide(make(own)), Effect.provide(make(unreachable)))
        expect(completion.choices[0]?.message.content).toContain("inner")
      }
      expect(yield* emulator.requestCount).toBe(2)
    }).pipe(Effect.provide(Emulator.layer())))
})

describe("BrowserTaskJournal", () => {
  it.effect("falls back to memory where there is no localStorage", () =>
    Effect.gen(function*() {
      expect(BrowserTaskJournal.isStorageAvailable()).toBe(false)
      const journal = yield* TaskJournal.TaskJournal
      yield* journal.record({ taskId: "t1", model: "video-1", prompt: "p", submittedAt: 0 })
      expect((yield* journal.list).map((e) => e.taskId)).toEqual(["t1"])
    }).pipe(Effect.provide(BrowserTaskJournal.layer())))

  it.effect("keeps tasks in localStorage across a rebuilt layer (a reload)", () => {
    const storage = fakeStorage()
    return withLocalStorage(
      storage,
      Effect.gen(function*() {
        expect(BrowserTaskJournal.isStorageAvailable()).toBe(true)
        const entry = { taskId: "t1", model: "video-1", prompt: "p", submittedAt: 1 }
        yield* Effect.provide(Effect.flatMap(TaskJournal.TaskJournal, (j) => j.record(entry)), BrowserTaskJournal.layer())
        expect(storage.getItem("switchboard-video-tasks/task-t1")).toContain("t1")
        const after = yield* Effect.provide(Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list), BrowserTaskJournal.layer())
        expect(after).toEqual([entry])
        const memory = yield* Effect.provide(Effect.flatMap(TaskJournal.TaskJournal, (j) => j.list), BrowserTaskJournal.layer("memory"))
        expect(memory).toEqual([])
      })
    )
  })

  it.effect("one item per task: a bad one is set aside, the others still listed; an old single-item journal is imported", () => {
    const storage = fakeStorage()
    storage.setItem("switchboard-video-tasks", JSON.stringify([{ taskId: "old", model: "video-1", prompt: "p", submittedAt: 0 }]))
    storage.setItem("switchboard-video-tasks/task-bad", "{\"taskId\": 42")
    return withLocalStorage(
      storage,
      Effect.gen(function*() {
        const journal = yield* TaskJournal.TaskJournal
        yield* journal.record({ taskId: "t2", model: "video-1", prompt: "q", submittedAt: 1 })
        const listing = yield* journal.scan
        expect(listing.entries.map((e) => e.taskId)).toEqual(["old", "t2"])
        expect(listing.quarantined).toMatchObject([{ key: "task-bad", movedTo: expect.stringContaining("quarantine") }])
        expect(storage.getItem("switchboard-video-tasks")).toBeNull()
        expect(storage.getItem("switchboard-video-tasks/task-bad")).toBeNull()
        expect(storage.getItem(listing.quarantined[0]!.movedTo)).toBe("{\"taskId\": 42")
      }).pipe(Effect.provide(BrowserTaskJournal.layer()))
    )
  })

  it.effect("a task claimed by one page is not claimed by another until released", () => {
    const storage = fakeStorage()
    return withLocalStorage(
      storage,
      Effect.gen(function*() {
        const claimIn = (layer: typeof BrowserTaskJournal.layerLocalStorage) =>
          Effect.flatMap(TaskJournal.TaskJournal, (j) => j.claim("t1")).pipe(Effect.provide(layer))
        const first = yield* Scope.make()
        expect(yield* Scope.provide(claimIn(BrowserTaskJournal.layer()), first)).toBe(true)
        expect(yield* Effect.scoped(claimIn(BrowserTaskJournal.layer()))).toBe(false)
        yield* Scope.close(first, Exit.void)
        expect(yield* Effect.scoped(claimIn(BrowserTaskJournal.layer()))).toBe(true)
      })
    )
  })

  it.effect("treats a storage that throws as unavailable", () => {
    const broken = { ...fakeStorage(), setItem: () => { throw new Error("QuotaExceededError") } }
    return withLocalStorage(broken, Effect.sync(() => expect(BrowserTaskJournal.isStorageAvailable()).toBe(false)))
  })
})

describe("BrowserAttachment.fromBlob", () => {
  it.effect("sniffs the media type of a File with none, and keeps a declared image type", () =>
    Effect.gen(function*() {
      const sniffed = yield* BrowserAttachment.fromBlob(new File([png], "photo"))
      expect(sniffed).toMatchObject({ mediaType: "image/png", byteLength: png.length })
      expect(sniffed.url).toBe(`data:image/png;base64,${Buffer.from(png).toString("base64")}`)
      const declared = yield* BrowserAttachment.fromBlob(new Blob(["<svg/>"], { type: "image/svg+xml" }), { detail: "high" })
      expect(declared).toMatchObject({ mediaType: "image/svg+xml", detail: "high" })
      const given = yield* BrowserAttachment.fromBlob(new Blob([png]), { mediaType: "image/x-custom" })
      expect(given.mediaType).toBe("image/x-custom")
    }))

  it.effect("names the file in its errors, and refuses an oversized one before reading it", () =>
    Effect.gen(function*() {
      const text = yield* Effect.flip(BrowserAttachment.fromBlob(new File(["hello"], "notes.txt", { type: "text/plain" })))
      expect(text).toMatchObject({ _tag: "AttachmentError", reason: "UnknownMediaType", source: "notes.txt" })
      let read = false
      const huge = {
        size: 50 * 1024 * 1024,
        type: "image/png",
        arrayBuffer: () => {
          read = true
          return Promise.resolve(new ArrayBuffer(0))
        }
      } as unknown as Blob
      const tooLarge = yield* Effect.flip(BrowserAttachment.fromBlob(huge))
      expect(tooLarge).toMatchObject({ reason: "TooLarge", source: "blob" })
      expect(read).toBe(false)
      const unreadable = { size: 1, type: "", arrayBuffer: () => Promise.reject(new Error("gone")) } as unknown as Blob
      expect(yield* Effect.flip(BrowserAttachment.fromBlob(unreadable))).toMatchObject({ reason: "Unreadable" })
    }))
})
