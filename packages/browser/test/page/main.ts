/**
 * The page of the browser test (`../browser.test.ts`): every capability
 * through `BrowserSwitchboard.layer` in a real Chromium, its results written
 * into the DOM and `window.__results` for the test to assert.
 *
 * Query: `api` (the emulator, another origin: CORS), `key` (the emulator's
 * key), `phase` (`main`; `resume` after a reload or in another tab; `hold`:
 * a tab that submits a task and keeps it).
 */
import { Attachment, Chat, Embeddings, Images, Moderations, Switchboard, Videos } from "@switchboard/core"
import { Reply, ScriptedModel } from "@switchboard/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { BrowserAttachment, BrowserSwitchboard, BrowserTaskJournal } from "../../src/index.js"

interface Result {
  readonly ok: boolean
  readonly [key: string]: unknown
}

declare global {
  interface Window {
    __results: Record<string, Result>
    __done: boolean
  }
}

const params = new URLSearchParams(location.search)
const api = params.get("api") ?? ""
const key = params.get("key") ?? ""
const phase = params.get("phase") ?? "main"
const journalPrefix = "switchboard-video-tasks/task-"
const poll = { schedule: Schedule.spaced("50 millis"), deadline: "30 seconds" } as const

window.__results = {}
window.__done = false

/** The page talks to the emulator on its own origin, with the emulator's (local, throw-away) key. */
const direct = BrowserSwitchboard.layer({ baseUrl: api, apiKey: key, allowApiKeyInBrowser: true, maxRetries: 0 })
/**
 * The SDK as an application keeps it: built once, living as long as the
 * page, so the claims on its video tasks are held until the page goes away.
 */
const pageRuntime = ManagedRuntime.make(direct)
const pageLifetime = Layer.effectContext(Effect.promise(() => pageRuntime.context()))
/** The recommended set-up: no key in the page, the page's own server adds it. */
const proxied = BrowserSwitchboard.layer({ baseUrl: "/", journal: "memory", maxRetries: 0 })

const section = (name: string) => {
  const element = document.createElement("section")
  element.id = name
  element.innerHTML = `<h2>${name}</h2><pre class="out"></pre>`
  document.getElementById("checks")!.append(element)
  return { element, out: element.querySelector("pre")! }
}

const describe = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` :
    typeof error === "object" && error !== null && "_tag" in error ?
      `${String((error as { _tag: unknown })._tag)}: ${String((error as { message?: unknown }).message)}` :
      String(error)

/** Runs one check; its outcome goes into the DOM and `window.__results`, never stopping the others. */
const check = <E>(
  name: string,
  body: (dom: ReturnType<typeof section>) => Effect.Effect<Record<string, unknown>, E, BrowserSwitchboard.Services>,
  layer: Layer.Layer<BrowserSwitchboard.Services, unknown> = direct
) =>
  Effect.suspend(() => {
    const dom = section(name)
    return body(dom).pipe(
      Effect.provide(layer),
      Effect.match({
        onSuccess: (value) => {
          dom.element.className = "ok"
          if (dom.out.textContent === "") dom.out.textContent = JSON.stringify(value).slice(0, 300)
          window.__results[name] = { ok: true, ...value }
        },
        onFailure: (error) => {
          dom.element.className = "failed"
          dom.out.textContent = describe(error)
          window.__results[name] = { ok: false, error: describe(error) }
        }
      })
    )
  })

const prompt = "Hello from a page"
const messages = [{ role: "user" as const, content: prompt }]

/** Shows an image and waits until the browser has decoded it. */
const showImage = (url: string, into: HTMLElement) =>
  Effect.promise(async () => {
    const img = document.createElement("img")
    img.src = url
    into.after(img)
    await img.decode()
    return { naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight }
  })

/** A 1×1 PNG, as a file picker would hand it over: bytes with no declared type. */
const pngFile = () => {
  const base64 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
  return new File([bytes], "dot.png")
}

/** The journal's records in localStorage: one item per task. */
const storedJournal = () =>
  Object.keys(localStorage).filter((key) => key.startsWith(journalPrefix)).map((key) =>
    JSON.parse(localStorage.getItem(key)!) as { taskId: string; videoUrl?: string }
  )

/**
 * Fills `localStorage` to its quota, then frees `room` characters: what a
 * page whose origin stored much else leaves the journal. Returns how many
 * items it added (`fill-<i>`), for `unfill`.
 */
const fillLocalStorage = (room: number) => {
  let items = 0
  for (let size = 1 << 20; size >= 1;) {
    try {
      localStorage.setItem(`fill-${items}`, "x".repeat(size))
      items++
    } catch {
      size = Math.floor(size / 2)
    }
  }
  localStorage.setItem("fill-0", localStorage.getItem("fill-0")!.slice(room))
  return items
}

const unfill = (items: number) => {
  for (let i = 0; i < items; i++) localStorage.removeItem(`fill-${i}`)
}

/** A submission with the journal in a `localStorage` that has `room` characters left: how it ended. */
const submitAtQuota = (prompt: string, room: number) =>
  Effect.acquireUseRelease(
    Effect.sync(() => fillLocalStorage(room)),
    () =>
      Effect.match(Videos.submit({ model: "video-1", prompt }), {
        onSuccess: (taskId) => ({ taskId, journaled: storedJournal().some((e) => e.taskId === taskId) }),
        onFailure: (error) => ({ error: error._tag, code: "code" in error ? error.code : undefined, message: error.message })
      }),
    (items) => Effect.sync(() => unfill(items))
  )

const main = Effect.gen(function*() {
  localStorage.clear()

  yield* check("chat", ({ out }) =>
    Effect.map(Chat.create({ model: "gpt-4o-mini", messages }), (completion) => {
      const content = completion.choices[0]?.message.content ?? ""
      out.textContent = content
      return { content }
    }))

  yield* check("stream", ({ out }) =>
    Effect.gen(function*() {
      const times: Array<number> = []
      yield* Chat.streamText({ model: "gpt-4o-mini", messages }).pipe(
        Stream.runForEach((delta) =>
          Effect.sync(() => {
            out.textContent += delta
            times.push(performance.now())
          })
        )
      )
      return { content: out.textContent, updates: times.length, spanMillis: times.at(-1)! - times[0]! }
    }))

  yield* check("image", ({ out }) =>
    Effect.gen(function*() {
      const [image] = yield* Images.generate({ prompt: "a lighthouse at dusk" })
      out.textContent = image!.alt ?? image!.url
      return { url: image!.url, ...(yield* showImage(image!.url, out)) }
    }))

  yield* check("imageToImage", ({ out }) =>
    Effect.gen(function*() {
      const attachment = yield* BrowserAttachment.fromBlob(pngFile())
      const [image] = yield* Images.transform({ prompt: "make it blue", image: attachment.url, size: "1792x1024" })
      out.textContent = image!.alt ?? image!.url
      return {
        mediaType: attachment.mediaType,
        byteLength: attachment.byteLength,
        alt: image!.alt,
        ...(yield* showImage(image!.url, out))
      }
    }))

  yield* check("attachmentMessage", ({ out }) =>
    Effect.gen(function*() {
      const attachment = yield* BrowserAttachment.fromBlob(new Blob([pngFile()], { type: "image/png" }), { detail: "low" })
      const completion = yield* Chat.create({ model: "gpt-4o-mini", messages: [Attachment.message("What is this?", attachment)] })
      const content = completion.choices[0]?.message.content ?? ""
      out.textContent = content
      return { content }
    }))

  yield* check("attachmentErrors", () =>
    Effect.gen(function*() {
      const notImage = yield* Effect.flip(BrowserAttachment.fromBlob(new File(["plain text"], "notes.txt", { type: "text/plain" })))
      const tooLarge = yield* Effect.flip(BrowserAttachment.fromBlob(pngFile(), { maxBytes: 10 }))
      if (notImage._tag !== "AttachmentError" || tooLarge._tag !== "AttachmentError") return yield* Effect.die(`${notImage._tag}, ${tooLarge._tag}`)
      return {
        notImage: { reason: notImage.reason, source: notImage.source },
        tooLarge: { reason: tooLarge.reason, message: tooLarge.message }
      }
    }))

  yield* check("video", ({ out }) =>
    Effect.gen(function*() {
      const statuses: Array<string> = []
      const taskId = yield* Videos.submit({ model: "video-1", prompt: "a cat surfing" })
      const journaled = storedJournal().map((e) => e.taskId)
      const updates = yield* Videos.poll(taskId, poll).pipe(
        Stream.tap((update) =>
          Effect.sync(() => {
            statuses.push(update._tag === "InProgress" ? update.status : update._tag)
            out.textContent = statuses.join(" → ")
          })
        ),
        Stream.runCollect
      )
      const last = [...updates].at(-1)!
      // A succeeded task stays, with its URL, until the caller is done with it.
      const keptWithUrl = storedJournal().some((e) => e.taskId === taskId && e.videoUrl !== undefined)
      yield* Videos.complete(taskId)
      return {
        taskId,
        journaledWhileRunning: journaled.includes(taskId),
        keptWithUrl,
        statuses,
        last: last._tag,
        videoUrl: last._tag === "Succeeded" ? last.videoUrl : undefined,
        journalAfter: storedJournal().length
      }
    }))

  yield* check("embeddings", ({ out }) =>
    Effect.map(
      Embeddings.create({ model: "text-embedding-3-small", input: ["a cat", "a dog"], dimensions: 8 }),
      (response) => {
        out.textContent = response.data.map((d) => d.embedding.map((x) => x.toFixed(2)).join(" ")).join("\n")
        return { count: response.data.length, dimensions: response.data[0]?.embedding.length }
      }
    ))

  yield* check("journalAtQuota", ({ out }) =>
    Effect.gen(function*() {
      const full = yield* submitAtQuota("journal at quota: full", 0)
      // Room for a small probe, not for a record.
      const nearlyFull = yield* submitAtQuota("journal at quota: nearly full", 120)
      out.textContent = JSON.stringify({ full, nearlyFull })
      return { full, nearlyFull, journalAfter: storedJournal().length }
    }), BrowserSwitchboard.layer({ baseUrl: api, apiKey: key, allowApiKeyInBrowser: true, maxRetries: 0, journal: "localStorage" }))

  yield* check("moderation", ({ out }) =>
    Effect.gen(function*() {
      const violent = yield* Moderations.check("I will attack and kill")
      const calm = yield* Moderations.check("a quiet afternoon")
      out.textContent = `violent: ${violent.flagged}, calm: ${calm.flagged}`
      return { violentFlagged: violent.flagged, calmFlagged: calm.flagged }
    }))

  // The testing kit's scripted layer in a page: nothing of it is Node's, and nothing is sent.
  yield* check("scripted", ({ out }) =>
    Effect.gen(function*() {
      const created = yield* Chat.create({ model: "gpt-4o-mini", messages })
      const streamed = yield* Chat.accumulate(Chat.stream({ model: "gpt-4o-mini", messages }))
      yield* ScriptedModel.assertComplete
      out.textContent = created.choices[0]?.message.content ?? ""
      return {
        created: created.choices[0]?.message.content,
        streamed: streamed.choices[0]?.message.content,
        calls: (yield* ScriptedModel.calls).map((call) => call.streamed)
      }
    }).pipe(Effect.provide(ScriptedModel.layer([
      Reply.error(503, { headers: { "retry-after": "0" } }),
      Reply.text("Hello from a script"),
      Reply.text("Hello from a script")
    ], { baseUrl: "http://127.0.0.1:9" }))))

  yield* check("proxy", ({ out }) =>
    Effect.gen(function*() {
      const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "via the proxy" }] }
      const completion = yield* Chat.create(request)
      let updates = 0
      yield* Stream.runForEach(Chat.streamText(request), (delta) =>
        Effect.sync(() => {
          out.textContent += delta
          updates++
        }))
      return { content: completion.choices[0]?.message.content ?? "", streamed: out.textContent, updates }
    }), proxied)

  yield* check("keyGuard", ({ out }) =>
    Effect.gen(function*() {
      const build = (options: BrowserSwitchboard.Options) => Effect.flip(Effect.scoped(Layer.build(BrowserSwitchboard.layer(options))))
      const refused = yield* build({ baseUrl: api, apiKey: "sk-live-1234567890" })
      const viaHeader = yield* build({ baseUrl: api, headers: { Authorization: "Bearer sk-live-1234567890" } })
      // Every header the SDK redacts as a secret, not only authorization.
      const viaSecretHeaders = yield* Effect.forEach(["x-api-key", "Api-Key", "x-auth-token"], (name) =>
        Effect.map(build({ baseUrl: api, headers: { [name]: "sk-live-1234567890" } }), (error) =>
          error._tag === "ApiKeyInBrowserError" ? error.where : error._tag))
      out.textContent = refused.message
      return {
        tag: refused._tag,
        isGuardError: BrowserSwitchboard.isApiKeyInBrowserError(refused),
        where: refused._tag === "ApiKeyInBrowserError" ? refused.where : undefined,
        message: refused.message,
        viaHeaderTag: viaHeader._tag,
        viaHeaderWhere: viaHeader._tag === "ApiKeyInBrowserError" ? viaHeader.where : undefined,
        viaSecretHeaders
      }
    }))

  // A secret header given per call is refused too, before the request leaves the page.
  yield* check("callGuard", ({ out }) =>
    Effect.gen(function*() {
      const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "a key per call" }] }
      const perCall = Switchboard.withRequestOptions({ headers: { "X-Api-Key": "sk-live-1234567890" } })
      const whole = yield* Effect.flip(perCall(Chat.create(request)))
      const streamed = yield* Effect.flip(Stream.runDrain(perCall(Chat.streamText(request))))
      out.textContent = whole.message
      const shown = (error: typeof streamed) => ({
        tag: error._tag,
        field: error._tag === "ConfigurationError" ? error.field : undefined,
        leaked: String(error).includes("sk-live-1234567890") || error.message.includes("sk-live-1234567890")
      })
      return { whole: shown(whole), streamed: shown(streamed), message: whole.message }
    }), BrowserSwitchboard.layer({ baseUrl: api, journal: "memory", maxRetries: 0 }))

  // Same origin, so content-encoding is visible to the wire; the model names the coding.
  yield* check("compressed", ({ out }) =>
    Effect.gen(function*() {
      const codings = ["gzip", "br", "deflate"]
      const whole = yield* Effect.forEach(codings, (model) =>
        Effect.map(Chat.create({ model, messages }), (completion) => completion.choices[0]?.message.content ?? ""))
      const streamed = yield* Effect.forEach(codings, (model) =>
        Effect.map(Stream.runCollect(Chat.streamText({ model, messages })), (deltas) => [...deltas].join("")))
      const refused = yield* Effect.flip(Chat.create({ model: "compress", messages }))
      out.textContent = [...whole, ...streamed, `${refused._tag}: ${refused.message}`].join("\n")
      return { whole, streamed, refused: refused._tag }
    }), BrowserSwitchboard.layer({ baseUrl: "/coded", journal: "memory", maxRetries: 0 }))

  // `/moved/<status>/<other|same>` answers with a redirect to another origin, or to its own;
  // either would answer a followed request with a success. Secret headers go on the request.
  yield* check("redirects", ({ out }) =>
    Effect.gen(function*() {
      const outcomes: Array<string> = []
      for (const status of [301, 302, 303, 307, 308]) {
        for (const target of ["other", "same"]) {
          const layer = BrowserSwitchboard.layer({
            baseUrl: `/moved/${status}/${target}`,
            headers: { "x-api-key": "sk-page-secret" },
            allowApiKeyInBrowser: true,
            journal: "memory",
            maxRetries: 0
          })
          const whole = yield* Effect.flip(Effect.provide(Chat.create({ model: "m", messages }), layer))
          const streamed = yield* Effect.flip(Effect.provide(Stream.runDrain(Chat.streamText({ model: "m", messages })), layer))
          for (const error of [whole, streamed]) outcomes.push(`${status} ${target}: ${describe(error)}`)
        }
      }
      out.textContent = outcomes.join("\n")
      return { outcomes }
    }))

  // fetch undoes a list only when it takes every name in it: the wire undoes the rest.
  yield* check("codingLists", ({ out }) =>
    Effect.gen(function*() {
      const lists = ["identity, gzip", "gzip, identity", "Gzip , Identity", "GZIP", "x-gzip", "deflate, identity"]
      const whole = yield* Effect.forEach(lists, (model) =>
        Effect.map(Chat.create({ model, messages }), (completion) => completion.choices[0]?.message.content ?? ""))
      const streamed = yield* Effect.forEach(lists, (model) =>
        Effect.map(Stream.runCollect(Chat.streamText({ model, messages })), (deltas) => [...deltas].join("")))
      const refused = yield* Effect.forEach(["identity, br", "gzip, compress"], (model) =>
        Effect.map(Effect.flip(Chat.create({ model, messages })), describe))
      out.textContent = [...whole, ...streamed, ...refused].join("\n")
      return { whole, streamed, refused }
    }), BrowserSwitchboard.layer({ baseUrl: "/coded", journal: "memory", maxRetries: 0 }))

  // Last: a task left running for the reload to resume.
  yield* check("submitForResume", ({ out }) =>
    Effect.gen(function*() {
      const taskId = yield* Videos.submit({ model: "video-1", prompt: "a reloaded page resumes me" })
      out.textContent = `submitted ${taskId}; reload the page to resume it`
      return { taskId, journal: storedJournal().map((e) => e.taskId) }
    }), pageLifetime)
})

/** A tab that submits a task and keeps it (polling it elsewhere, say) while it stays open. */
const hold = check("hold", () =>
  Effect.map(Videos.submit({ model: "video-1", prompt: "a tab holds me" }), (taskId) => ({ taskId })), pageLifetime)

const resume = check("resume", ({ out }) =>
  Effect.gen(function*() {
    const before = storedJournal().map((e) => e.taskId)
    const { busy, pending } = yield* Videos.resumePending(poll)
    const finished = yield* Effect.forEach(pending, ({ entry, updates }) =>
      Effect.map(Effect.tap(Stream.runLast(updates), () => Videos.complete(entry.taskId)), (last) => ({
        taskId: entry.taskId,
        prompt: entry.prompt,
        last: Option.match(last, { onNone: () => "none", onSome: (update) => update._tag })
      })))
    out.textContent = finished.map((f) => `${f.taskId}: ${f.last}`).join("\n")
    return {
      before,
      finished,
      busy: busy.map((e) => e.taskId),
      journalAfter: storedJournal().length,
      storage: BrowserTaskJournal.isStorageAvailable()
    }
  }), pageLifetime)

void Effect.runPromise(phase === "resume" ? resume : phase === "hold" ? hold : main).finally(() => {
  const failed = Object.entries(window.__results).filter(([, r]) => !r.ok).map(([name]) => name)
  document.getElementById("status")!.textContent = failed.length === 0 ? "all checks passed" : `failed: ${failed.join(", ")}`
  window.__done = true
})
