/**
 * Saving generated media to disk: images and videos are downloaded as a
 * stream (or decoded from a data URI) into a temporary file, created
 * exclusively under a random name, that is linked to its name only when
 * complete, so a failure never leaves a half-written file behind and an
 * existing file is never replaced. Names made from the service's data (a
 * task id) are made safe first. A video task leaves the journal only once
 * its file is saved.
 *
 * @since 0.1.0
 */
import type { GeneratedImage } from "@switchboard/core/Images"
import * as Protocol from "@switchboard/core/Protocol"
import * as SwitchboardConfig from "@switchboard/core/SwitchboardConfig"
import * as SwitchboardError from "@switchboard/core/SwitchboardError"
import type { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import type * as TaskPoller from "@switchboard/core/TaskPoller"
import * as Videos from "@switchboard/core/Videos"
import type * as Arr from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Base64 from "effect/encoding/Base64"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import type * as PlatformError from "effect/PlatformError"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as Crypto from "node:crypto"
import * as Platform from "./internal/platform.js"

/**
 * Writing a file failed; `path` names it.
 *
 * @since 0.1.0
 * @category errors
 */
export class SaveError extends Schema.TaggedError<SaveError>()("SaveError", {
  path: Schema.String,
  message: Schema.String
}) {}

const extensionOf: Record<string, string> = {
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/webp": ".webp",
  "video/mp4": ".mp4"
}

const isAlreadyExists = (error: PlatformError.PlatformError) => error.reason._tag === "AlreadyExists"

/**
 * `mkdir -p`, one level at a time. Node's recursive `mkdir` never returns
 * under `/proc` (it spins at full CPU): each missing level is made on its
 * own, so an impossible one fails at once.
 */
const makeDirectories = (fs: FileSystem.FileSystem, paths: Path.Path, directory: string) =>
  Effect.gen(function*() {
    const missing: Array<string> = []
    for (let dir = directory; !(yield* fs.exists(dir)); dir = paths.dirname(dir)) {
      missing.unshift(dir)
      if (paths.dirname(dir) === dir) break
    }
    for (const dir of missing) {
      yield* fs.makeDirectory(dir).pipe(
        // Made meanwhile by someone else: as good.
        Effect.catchIf(isAlreadyExists, () => Effect.void)
      )
    }
  })

/**
 * `text` as one file name, for names made from data the SDK does not
 * control (a task id, a prefix): letters, digits, `.`, `_` and `-` only
 * (any other run becomes one `-`), no leading `.` or `-` (no `..`, no hidden
 * file, no option-like name), at most 100 characters, never a Windows
 * device name; `fallback` when nothing is left. So it never names a
 * directory or leaves the one it is joined to.
 *
 * @since 0.1.0
 * @category saving
 */
export const safeFileName = (text: string, fallback: string): string => {
  const name = text.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[.-]+/, "").slice(0, 100).replace(/[.-]+$/, "")
  if (name === "") return fallback
  return /^(?:con|prn|aux|nul|com\d|lpt\d)(?:\.|$)/i.test(name) ? name.replace(/^[^.]*/, (device) => `${device}_`) : name
}

/** `dir/fox-1.png` → `dir/fox-1-2.png` for the second try. */
const candidate = (path: string, attempt: number) =>
  attempt === 1 ? path : path.replace(/(\.[^./\\]*)?$/, (extension) => `-${attempt}${extension}`)

/** Whether `a` and `b` hold the same bytes, `b` being a file, not a link (read in chunks: a video is never held whole). */
const sameBytes = (fs: FileSystem.FileSystem, a: string, b: string) =>
  Effect.gen(function*() {
    const isLink = yield* Effect.isSuccess(fs.readLink(b))
    const [infoA, infoB] = yield* Effect.all([fs.stat(a), fs.stat(b)])
    if (isLink || infoB.type !== "File" || infoA.size !== infoB.size) return false
    const digest = (path: string) =>
      Stream.runFold(fs.stream(path), () => Crypto.createHash("sha256"), (hash, chunk) => hash.update(chunk)).pipe(
        Effect.map((hash) => hash.digest("hex"))
      )
    const [digestA, digestB] = yield* Effect.all([digest(a), digest(b)])
    return digestA === digestB
  }).pipe(Effect.orElseSucceed(() => false))

/**
 * Writes `bytes` to `path`, or, when a file is there already, to the first
 * free `path` with `-2`, `-3`… before the extension; returns the path used.
 * With `sameIsSaved`, a name that already holds these very bytes is the
 * answer: a save repeated (a resumed task) makes no copy.
 *
 * The bytes go to a temporary file beside it, created exclusively under a
 * random name (a planted file or symlink makes the open fail rather than
 * redirect it), which is hard-linked to its name when complete: `link`
 * fails rather than replace a file, so two writers racing for a name both
 * keep theirs. The temporary file is removed whatever happens, so a failure
 * leaves nothing.
 */
const writeNew = <E, R>(path: string, bytes: Stream.Stream<Uint8Array, E, R>, sameIsSaved: boolean) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const paths = yield* Path.Path
    const failed = (target: string) => (e: { readonly message: string }) => new SaveError({ path: target, message: e.message })
    yield* Effect.mapError(makeDirectories(fs, paths, paths.dirname(path)), failed(path))
    const temporary = `${path}.${Crypto.randomBytes(12).toString("hex")}.part`
    const claim = (attempt: number): Effect.Effect<string, SaveError> => {
      const target = candidate(path, attempt)
      const taken = Effect.flatMap(
        sameIsSaved ? sameBytes(fs, temporary, target) : Effect.succeed(false),
        (same) => same ? Effect.succeed(target) : claim(attempt + 1)
      )
      return fs.link(temporary, target).pipe(
        Effect.as(target),
        Effect.catch((e) => isAlreadyExists(e) && attempt < 1000 ? taken : Effect.fail(failed(target)(e)))
      )
    }
    return yield* Stream.run(bytes, Sink.mapError(fs.sink(temporary, { flag: "wx" }), failed(path))).pipe(
      Effect.andThen(claim(1)),
      Effect.ensuring(Effect.ignore(fs.remove(temporary)))
    )
  })

/** Redirects a download follows; the plain `fetch` carries no key to leak along them. */
const maxRedirects = 5

/** What a media download may not be: a page or an error body saved as a video is no video. */
const notMedia = /^(?:text\/|application\/(?:json|xml|xhtml|problem)|[^;]*\+(?:json|xml))/i

/**
 * A GET that follows up to `maxRedirects` redirects; past them, the last
 * redirect is the answer. It asks for the bytes as they are (`identity`):
 * media is compressed already, a compressed transfer has no length to check
 * a cut against, and `fetch` takes a gzip stream that stops before its end
 * for a whole one.
 */
const fetchFollowing = async (url: string, signal: AbortSignal): Promise<Response> => {
  let target = url
  for (let hop = 0;; hop++) {
    const response = await fetch(target, { signal, redirect: "manual", headers: { "accept-encoding": "identity" } })
    const location = response.headers.get("location")
    if (response.status < 300 || response.status >= 400 || location === null || hop === maxRedirects) return response
    await response.body?.cancel()
    target = new URL(location, target).href
  }
}

/** The limits of one download, checked (`SaveOptions`). */
interface Limits {
  readonly firstByte: Duration.Duration
  readonly idle: Duration.Duration
  readonly total: Duration.Duration
  readonly maxBytes: number
}

/**
 * The default of `SaveOptions.maxBytes`: 2 GiB, far above a generated
 * video, far below a full disk.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultMaxBytes = 2 * 1024 ** 3

const tooLarge = (url: string, limit: number) =>
  new SwitchboardError.ResponseTooLargeError({ message: `download of ${url} is larger than ${limit} bytes: nothing was saved`, limit })

/**
 * `bytes` failing with a `TimeoutError` when its first chunk (the request
 * and the answer's headers included) takes longer than `firstByte`, or a
 * later one longer than `idle`, and with a `ResponseTooLargeError` past
 * `maxBytes`. Only waits on the network count: a slow writer never trips it.
 */
const withinReadLimits = <E>(bytes: Stream.Stream<Uint8Array, E>, url: string, limits: Limits) =>
  Stream.transformPull(bytes, (pull) => {
    let first = true
    let read = 0
    const counted = Effect.flatMap(pull, (chunk: Arr.NonEmptyReadonlyArray<Uint8Array>) => {
      for (const bytes of chunk) read += bytes.length
      return read > limits.maxBytes ? Effect.fail(tooLarge(url, limits.maxBytes)) : Effect.succeed(chunk)
    })
    return Effect.succeed(Effect.suspend(() => {
      const [limit, phase, what] = first
        ? [limits.firstByte, "first-byte" as const, "sent no data within"]
        : [limits.idle, "idle" as const, "sent no data for"]
      first = false
      return Duration.isFinite(limit)
        ? Effect.timeoutOrElse(counted, {
          duration: limit,
          orElse: () =>
            Effect.fail(new SwitchboardError.TimeoutError({ message: `download of ${url} ${what} ${Duration.format(limit)}`, phase }))
        })
        : counted
    }))
  })

/**
 * Downloads with Node's own `fetch`, loaded only when a download happens:
 * an `@effect/platform` `HttpClient` would load at start for every program
 * that imports `@switchboard/node` (docs/performance.md, cold start).
 * Interruption (a time limit included) aborts the request, or cancels the
 * body being read.
 */
const download = (url: string, limits: Limits) => {
  const timedOut = Effect.fail(
    new SwitchboardError.TimeoutError({ message: `download of ${url} took longer than ${Duration.format(limits.total)}`, phase: "total" })
  )
  const refuse = (response: Response, error: SwitchboardError.RequestError) =>
    Effect.andThen(Effect.promise(() => response.body?.cancel() ?? Promise.resolve()), Effect.fail(error))
  const bytes = Stream.unwrap(
    Effect.gen(function*() {
      const response = yield* Effect.tryPromise({
        try: (signal) => fetchFollowing(url, signal),
        catch: () => new SwitchboardError.TransportError({ message: `download of ${url} failed`, sent: true })
      })
      if (response.status < 200 || response.status >= 300) {
        return yield* refuse(
          response,
          SwitchboardError.fromStatus({ status: response.status, message: `download of ${url} answered HTTP ${response.status}` })
        )
      }
      const type = response.headers.get("content-type") ?? ""
      if (notMedia.test(type)) {
        return yield* refuse(
          response,
          new SwitchboardError.ResponseDecodeError({
            message: `download of ${url} is ${type.split(";")[0]}, not media: nothing was saved`,
            body: "",
            status: response.status
          })
        )
      }
      if (Number(response.headers.get("content-length")) > limits.maxBytes) return yield* refuse(response, tooLarge(url, limits.maxBytes))
      const body = response.body
      if (body === null) return Stream.empty
      return Stream.fromReadableStream({
        evaluate: () => body,
        onError: () => new SwitchboardError.TransportError({ message: `download of ${url} was cut off`, sent: true })
      })
    })
  )
  const read = withinReadLimits(bytes, url, limits)
  // The whole download, from the request to the last byte.
  return Duration.isFinite(limits.total) ? Stream.interruptWhen(read, Effect.andThen(Effect.sleep(limits.total), timedOut)) : read
}

/**
 * The limits of a download; a limit missing takes its default. A negative
 * or NaN one is a `ConfigurationError` naming it.
 *
 * @since 0.1.0
 * @category models
 */
export interface SaveOptions {
  /** The whole download, from the request to its last byte. Default 10 minutes. */
  readonly timeout?: Duration.Input | undefined
  /** From the request to the first byte of the body (redirects and headers included). Default 60 seconds. */
  readonly firstByteTimeout?: Duration.Input | undefined
  /** The longest silence between two reads of the body. Default 60 seconds. */
  readonly idleTimeout?: Duration.Input | undefined
  /** Most bytes saved (decoded, when the server compresses). Default `defaultMaxBytes`, 2 GiB. */
  readonly maxBytes?: number | undefined
}

const maxBytesOf = (input: number | undefined): Result.Result<number, ConfigurationError> =>
  input === undefined
    ? Result.succeed(defaultMaxBytes)
    : Number.isInteger(input) && input >= 1
    ? Result.succeed(input)
    : Result.fail(new SwitchboardError.ConfigurationError({ field: "maxBytes", message: "maxBytes must be a whole number of bytes, 1 or more" }))

const limitsOf = (options: SaveOptions): Result.Result<Limits, ConfigurationError> =>
  Result.all({
    total: SwitchboardConfig.duration("timeout", options.timeout ?? Duration.minutes(10)),
    firstByte: SwitchboardConfig.duration("firstByteTimeout", options.firstByteTimeout ?? Duration.seconds(60)),
    idle: SwitchboardConfig.duration("idleTimeout", options.idleTimeout ?? Duration.seconds(60)),
    maxBytes: maxBytesOf(options.maxBytes)
  })

const bytesOf = (url: string, limits: Limits): Stream.Stream<Uint8Array, SwitchboardError.RequestError> => {
  const data = Protocol.parseDataUri(url)
  if (data === undefined) return download(url, limits)
  const decoded = Base64.decode(data.base64.replace(/\s+/g, ""))
  return Result.isSuccess(decoded)
    ? Stream.make(decoded.success)
    : Stream.fail(new SwitchboardError.ResponseDecodeError({ message: "image data URI is not valid base64", body: url.slice(0, 80) }))
}

/**
 * Saves a file from a URL or data URI to `path`, returning the path used:
 * `path`, or when another file is there already the first free name with
 * `-2`, `-3`… before the extension (an existing file is never replaced; one
 * holding the same bytes is taken as this save, so saving twice makes no
 * copy). A
 * download follows up to 5 redirects, must answer 2xx with a media content
 * type (not a page or an error body) and keep to `options`' limits; else
 * nothing is written.
 *
 * @since 0.1.0
 * @category saving
 */
export const save: (
  url: string,
  path: string,
  options?: SaveOptions
) => Effect.Effect<string, SaveError | SwitchboardError.RequestError, FileSystem.FileSystem | Path.Path> = Effect.fn("NodeMedia.save")(
  function*(url: string, path: string, options: SaveOptions = {}) {
    const limits = yield* Effect.fromResult(limitsOf(options))
    return yield* writeNew(path, bytesOf(url, limits), true)
  }
)

/**
 * Saves generated images into `directory` as `<prefix>-<n><ext>` (the
 * prefix through `safeFileName`: it never leaves `directory`), returning
 * their paths in order. An existing file is never replaced: when the name
 * is taken (another run, the same second), the image goes to
 * `<prefix>-<n>-2<ext>` (or `-3`, …), chosen atomically.
 *
 * @since 0.1.0
 * @category saving
 */
export const saveImages: (
  images: ReadonlyArray<GeneratedImage>,
  directory: string,
  prefix?: string,
  options?: SaveOptions
) => Effect.Effect<Array<string>, SaveError | SwitchboardError.RequestError, FileSystem.FileSystem | Path.Path> = Effect.fn(
  "NodeMedia.saveImages"
)(function*(images: ReadonlyArray<GeneratedImage>, directory: string, prefix = "image", options: SaveOptions = {}) {
  const paths = yield* Path.Path
  const limits = yield* Effect.fromResult(limitsOf(options))
  const name = safeFileName(prefix, "image")
  return yield* Effect.forEach(images, (image, i) => {
    const fromUrl = /\.(png|jpe?g|gif|webp)(?:$|\?)/i.exec(image.url)?.[1]
    // Own keys only: a media type `constructor` named `Object`'s source as the extension.
    const known = image.mediaType !== undefined && Object.hasOwn(extensionOf, image.mediaType) ? extensionOf[image.mediaType] : undefined
    const extension = image.mediaType ? known ?? ".img" : fromUrl ? `.${fromUrl.toLowerCase()}` : ".png"
    return writeNew(paths.join(directory, `${name}-${i + 1}${extension}`), bytesOf(image.url, limits), false)
  })
})

/**
 * The file name of a task's video: `<task id>.<ext>`, the extension from
 * the URL (`mp4` when it has none). The id is the service's: it goes
 * through `safeFileName`, so `../../x` is `x.mp4`, never a path.
 *
 * @since 0.1.0
 * @category saving
 */
export const videoFileName = (taskId: string, url: string): string =>
  `${safeFileName(taskId, "video")}.${/\.(mp4|webm|mov|m4v)(?:$|[?#])/i.exec(url)?.[1]?.toLowerCase() ?? "mp4"}`

/**
 * Saves a succeeded task's video into `directory` as `videoFileName` (or,
 * when that file exists, the next free name: `-2`, `-3`…), then completes
 * the task: it leaves the journal only once the file is written, so an
 * interrupted download leaves it there, with its URL, to finish later.
 *
 * @since 0.1.0
 * @category saving
 */
export const saveVideo = Effect.fn("NodeMedia.saveVideo")(
  function*(done: Videos.Succeeded, directory: string, options: SaveOptions = {}) {
    const paths = yield* Path.Path
    const path = yield* save(done.videoUrl, paths.join(directory, videoFileName(done.taskId, done.videoUrl)), options)
    yield* Videos.complete(done.taskId)
    return path
  }
)

/**
 * What `finish` takes: polling, where the video goes, progress updates and
 * the download's limits.
 *
 * @since 0.1.0
 * @category models
 */
export interface FinishOptions extends TaskPoller.PollOptions<SwitchboardError.SwitchboardError> {
  /** Where the video goes; default the directory the task was submitted with (`SubmitOptions.output`), else `.`. */
  readonly directory?: string | undefined
  /** Called with each update as it comes, e.g. to draw progress. */
  readonly onUpdate?: ((update: TaskPoller.TaskUpdate) => Effect.Effect<void>) | undefined
  /** The download's limits. */
  readonly download?: SaveOptions | undefined
}

/**
 * Finishes a task that was submitted earlier (by this process or one that
 * stopped): polls it to its end, saves its video and completes it, returning
 * the file's path. A failed task fails with `TaskFailedError`; a task past
 * the deadline stays in the journal (`TaskTimeoutError`).
 *
 * @since 0.1.0
 * @category saving
 */
export const finishVideo = Effect.fn("NodeMedia.finishVideo")(function*(taskId: string, options: FinishOptions = {}) {
  const videos = yield* Videos.Videos
  const journal = yield* TaskJournal.TaskJournal
  const { directory, download, onUpdate, ...poll } = options
  const updates = videos.poll(taskId, poll)
  const done = yield* Videos.outcome(taskId, onUpdate === undefined ? updates : Stream.tap(updates, onUpdate))
  const output = directory ?? Option.getOrUndefined(yield* journal.get(taskId))?.output ?? "."
  return yield* saveVideo(done, output, download)
})

/**
 * What saving needs on Node: the file system and paths (downloads use
 * Node's `fetch`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<FileSystem.FileSystem | Path.Path> = Platform.fileSystemAndPath
