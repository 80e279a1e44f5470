/**
 * Recorded exchanges (cassettes): an `HttpWire` that records what a real
 * wire sends and receives into a JSON file, and replays it later with
 * nothing listening. Node only (it reads and writes files).
 *
 * Modes (`mode`, else the `SWITCHBOARD_CASSETTE` environment variable, else
 * `replay`):
 * - `replay`: every call is answered from the file; one that matches no
 *   recording fails with `CassetteMissError`, naming the request and the
 *   first field where it differs from the nearest recording. The file is
 *   never written.
 * - `record`: every call goes to the real wire and is recorded. A recording
 *   replaces the earlier one of the same request at the same place (the
 *   layer's n-th call of a request replaces the file's n-th recording of it,
 *   or is added at the end); recordings of other requests, and what other
 *   layers and processes record meanwhile, are kept. A recording no call
 *   makes any more stays: to start afresh, delete the file.
 * - `record-if-missing`: replays what matches, records the rest, each at the
 *   place it was missing from (two processes recording the same missing
 *   request write it once).
 * - `passthrough`: the real wire, nothing recorded or replayed.
 *
 * Requests match on method, path and the body as canonical JSON (keys
 * sorted), or on what `normalize` makes of them; identical requests replay
 * in the order they were recorded. A stream keeps its chunks and when each
 * came; the replay waits as long between them, on Effect's `Clock` (a
 * `TestClock` under `it.effect`: `TestTime.run` moves it).
 *
 * The file never holds the key: `authorization`, any header named in
 * `secretHeaders`, and their values wherever they appear, are left out or
 * replaced by `[redacted]`. Each write is whole (a temporary file, then a
 * rename), under a lock, merged with what is on disk, so two processes
 * recording into one file lose nothing. A lock whose owner died (or older
 * than 30 s) is taken over, with the temporary file a dead writer left; a
 * writer whose lock was taken over (it hung past 30 s) finds out at its
 * rename and merges again, never replacing what its successor wrote. The
 * file is checked whole when read: a recording missing a field the replay
 * needs, or a file past 128 MiB, fails the layer with `CassetteFileError`.
 *
 * The format (version 1), readable in a review:
 * ```json
 * { "format": "switchboard-cassette", "version": 1, "interactions": [
 *   { "request": { "method": "POST", "path": "/chat/completions", "body": { "model": "…", "messages": [] } },
 *     "response": { "status": 200, "headers": { "content-type": "application/json" }, "body": { "id": "…" } } },
 *   { "request": { … "body": { "stream": true, … } },
 *     "response": { "status": 200, "headers": { … }, "chunks": [ { "at": 0, "text": "data: {…}\n\n" }, { "at": 12, "text": "…" } ] } }
 * ] }
 * ```
 * `body` is the parsed JSON when the text is JSON, else `text` holds it;
 * `at` is milliseconds since the request was sent.
 *
 * @since 1.0.0
 */
import * as HttpWire from "@switchboard/core/HttpWire"
import { fromEnvironment } from "@switchboard/core/internal/environment"
import { describe } from "@switchboard/core/internal/issue"
import * as Switchboard from "@switchboard/core/Switchboard"
import * as SwitchboardConfig from "@switchboard/core/SwitchboardConfig"
import { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaParser from "effect/SchemaParser"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Serve from "./internal/serve.js"

/**
 * What a cassette does: replay only, record everything, record what it
 * lacks, or pass through.
 *
 * @since 1.0.0
 * @category models
 */
export type Mode = "replay" | "record" | "record-if-missing" | "passthrough"

const modes: ReadonlyArray<Mode> = ["replay", "record", "record-if-missing", "passthrough"]

/**
 * The version this module writes and the newest it reads.
 *
 * @since 1.0.0
 * @category constants
 */
export const version = 1

/**
 * What a request is matched on.
 *
 * @since 1.0.0
 * @category models
 */
export interface Key {
  readonly method: string
  readonly path: string
  readonly body: unknown
}

/**
 * What a cassette takes: its file, its mode (record or replay) and the
 * secret headers to leave out.
 *
 * @since 1.0.0
 * @category models
 */
export interface Options {
  /** The cassette file. */
  readonly path: string
  /** Default: `SWITCHBOARD_CASSETTE`, else `replay`. */
  readonly mode?: Mode | undefined
  /** Header names (any case) whose values are secrets, beside `authorization`. */
  readonly secretHeaders?: ReadonlyArray<string> | undefined
  /** What a request is matched on; default: method, path, the body as it is. */
  readonly normalize?: ((key: Key) => Key) | undefined
}

/**
 * The file cannot be used: `problem` says why (`missing` in `replay` mode,
 * `truncated`, `corrupt` (a recording that lacks a field or has one of the
 * wrong kind, named in the message), `newer-version`, `too-large` (past
 * 128 MiB), `unwritable`). A replay never writes the file.
 *
 * @since 1.0.0
 * @category errors
 */
export class CassetteFileError extends Data.TaggedError("CassetteFileError")<{
  readonly file: string
  readonly problem: "missing" | "truncated" | "corrupt" | "newer-version" | "too-large" | "unwritable"
  readonly message: string
}> {}

/**
 * No recording answers the request. `field` is the first place where the
 * request differs from the nearest recording (`body.messages[0].content`),
 * `undefined` when every identical recording was already replayed.
 *
 * @since 1.0.0
 * @category errors
 */
export class CassetteMissError extends Data.TaggedError("CassetteMissError")<{
  readonly file: string
  readonly request: Key
  readonly field: string | undefined
  readonly message: string
}> {}

/**
 * A cassette in use: its mode and the requests it could not replay.
 *
 * @since 1.0.0
 * @category models
 */
export interface Service {
  readonly mode: Mode
  /** The misses so far. */
  readonly misses: Effect.Effect<ReadonlyArray<CassetteMissError>>
}

/**
 * The service that holds the cassette in use (see `Service`).
 *
 * @since 1.0.0
 * @category tags
 */
export class Cassette extends Context.Service<Cassette, Service>()("@switchboard/testing/Cassette") {}

interface Recorded {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body?: unknown
  readonly text?: string
  readonly chunks?: ReadonlyArray<{ readonly at: number; readonly text: string }>
}

interface Interaction {
  readonly request: Key & { readonly headers?: Readonly<Record<string, string>> }
  readonly response: Recorded
}

// ---------------------------------------------------------------------------
// The file
// ---------------------------------------------------------------------------

const fileError = (file: string, problem: CassetteFileError["problem"], detail: string) =>
  new CassetteFileError({ file, problem, message: `cassette ${file}: ${detail}` })

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The largest file read or written: a cassette is read whole into memory,
 * and one past this is no longer something a review reads.
 */
const maxFileBytes = 128 * 1024 * 1024

const Headers = Schema.Record(Schema.String, Schema.String)

/** One recording as the file holds it: a hand-edited or hostile file fails here, never deep in a replay. */
const StoredInteraction = Schema.Struct({
  request: Schema.Struct({
    method: Schema.String,
    path: Schema.String,
    body: Schema.optionalKey(Schema.Unknown),
    headers: Schema.optionalKey(Headers)
  }),
  response: Schema.Struct({
    status: Schema.Int,
    headers: Headers,
    body: Schema.optionalKey(Schema.Unknown),
    text: Schema.optionalKey(Schema.String),
    chunks: Schema.optionalKey(
      Schema.Array(Schema.Struct({ at: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0, { message: "must be 0 or more (milliseconds)" })), text: Schema.String }))
    )
  })
})

const decodeInteractions = SchemaParser.decodeUnknownResult(Schema.Array(StoredInteraction), { reportInput: true })

/**
 * Files read, by path, while unchanged (same size and modification time): a
 * suite replaying one cassette in many tests reads and parses it once.
 */
const parsed = new Map<string, { readonly size: number; readonly mtimeMs: number; readonly interactions: ReadonlyArray<Interaction> }>()

/** The file's interactions: none when it does not exist. */
const readFile = (file: string, cached = true): ReadonlyArray<Interaction> | CassetteFileError | undefined => {
  let text: string
  let stat: Fs.Stats | undefined
  try {
    stat = Fs.statSync(file, { throwIfNoEntry: false })
    if (stat === undefined) return undefined
    // A FIFO or a device would block the read or never end.
    if (!stat.isFile()) return fileError(file, "corrupt", "is not a regular file")
    if (stat.size > maxFileBytes) return fileError(file, "too-large", `is ${stat.size} bytes; a cassette holds at most ${maxFileBytes}`)
    const known = parsed.get(file)
    if (cached && known !== undefined && known.size === stat.size && known.mtimeMs === stat.mtimeMs) return known.interactions
    text = Fs.readFileSync(file, "utf8")
  } catch (error) {
    return fileError(file, "corrupt", `cannot be read (${String(error)})`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    const truncated = text.trim() === "" || /end of (JSON )?input|Unterminated/i.test(String(error))
    return truncated ?
      fileError(file, "truncated", "ends before its JSON does (truncated)") :
      fileError(file, "corrupt", `is not JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  if (!isRecord(json) || json["format"] !== "switchboard-cassette" || typeof json["version"] !== "number") {
    return fileError(file, "corrupt", `is not a cassette (no "format": "switchboard-cassette" and "version")`)
  }
  if (json["version"] > version) {
    return fileError(file, "newer-version", `is version ${json["version"]}; this @switchboard/testing reads up to ${version}`)
  }
  if (!Array.isArray(json["interactions"])) return fileError(file, "corrupt", `has no "interactions" array`)
  const decoded = decodeInteractions(json["interactions"])
  if (Result.isFailure(decoded)) return fileError(file, "corrupt", `has a bad recording at interactions${describe(decoded.failure, "")}`)
  const interactions = decoded.success as ReadonlyArray<Interaction>
  parsed.set(file, { size: stat.size, mtimeMs: stat.mtimeMs, interactions })
  return interactions
}

const sleepSync = (millis: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, millis)

const codeOf = (error: unknown): unknown => (error as { readonly code?: unknown }).code

/** Whether the process `pid` of this host runs (`EPERM`: it runs as another user). */
const runs = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return codeOf(error) === "EPERM"
  }
}

/** What the lock's `owner` file says: host, pid, token; `undefined` before it is written. */
const ownerOf = (lock: string): string | undefined => {
  try {
    return Fs.readFileSync(Path.join(lock, "owner"), "utf8")
  } catch {
    return undefined
  }
}

/** A lock's age by its time stamp; 0 when it is gone. */
const ageOf = (lock: string) => Date.now() - (Fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())

/**
 * A lock left behind: its owner (on this host) no longer runs, or it is older
 * than 30 s (an owner that hangs, a pid used again, another host's owner).
 * A lock whose owner is not written yet is young, not stale.
 */
const isStale = (lock: string): boolean => {
  if (ageOf(lock) > 30_000) return true
  const [host, pid] = (ownerOf(lock) ?? "").split(" ")
  return host === Os.hostname() && /^\d+$/.test(pid ?? "") && !runs(Number(pid))
}

/**
 * Removes the lock directory `lock`: moved aside first, in one step whatever
 * its holder writes into it meanwhile, then deleted. Gone already: done.
 */
const removeLock = (lock: string) => {
  const aside = `${lock}.${Math.random().toString(36).slice(2)}.gone`
  try {
    Fs.renameSync(lock, aside)
  } catch (error) {
    if (codeOf(error) === "ENOENT") return
    throw error
  }
  Fs.rmSync(aside, { recursive: true, force: true, maxRetries: 2 })
}

/**
 * Removes `lock` if it is stale, judged again under a second lock
 * (`.break`): of two waiters that found one dead lock, the second then finds
 * the lock its successor took since, alive, and leaves it.
 */
const breakIfStale = (lock: string): void => {
  const breaking = `${lock}.break`
  try {
    Fs.mkdirSync(breaking)
  } catch (error) {
    if (codeOf(error) !== "EEXIST") throw error
    // Held for a moment; older, its holder died holding it.
    if (ageOf(breaking) > 30_000) Fs.rmSync(breaking, { recursive: true, force: true })
    return
  }
  try {
    if (isStale(lock)) removeLock(lock)
  } finally {
    Fs.rmSync(breaking, { recursive: true, force: true })
  }
}

/** The lock of a write, as its holder knows it: the directory, the `owner` it wrote there, and that owner's token. */
interface Holding {
  readonly lock: string
  readonly owner: string
  readonly token: string
}

/**
 * Writes `owner` into the lock just made; `false` when the lock was taken
 * over first (its maker paused past 30 s before this write): the
 * successor's owner is there, or no lock.
 */
const claim = (lock: string, owner: string): boolean => {
  try {
    Fs.writeFileSync(Path.join(lock, "owner"), owner, { flag: "wx" })
    return true
  } catch (error) {
    if (codeOf(error) === "EEXIST" || codeOf(error) === "ENOENT") return false
    throw error
  }
}

/**
 * Runs `f` holding the file's lock: a directory beside it whose `owner`
 * file names its holder (host, pid, and a token of this holding). A stale
 * lock is taken over; a live one is waited for, never broken.
 */
const locked = <A>(file: string, f: (holding: Holding) => A): A => {
  const lock = `${file}.lock`
  const token = Math.random().toString(36).slice(2)
  const owner = `${Os.hostname()} ${process.pid} ${token}`
  for (;;) {
    try {
      Fs.mkdirSync(lock)
    } catch (error) {
      if (codeOf(error) !== "EEXIST") throw error
      if (isStale(lock)) breakIfStale(lock)
      else sleepSync(5)
      continue
    }
    if (claim(lock, owner)) break
  }
  try {
    return f({ lock, owner, token })
  } finally {
    // A holder whose lock was taken over (it hung past 30 s) leaves its successor's.
    if (ownerOf(lock) === owner) removeLock(lock)
  }
}

/**
 * Replaces `file` with `text`, if the lock is still held: `false` when it
 * was taken over (its holder hung past 30 s), and nothing was written. The
 * temporary file is written inside the lock's directory and renamed from
 * there, so a lock taken over (its directory moved aside) makes the rename
 * fail rather than replace what the successor wrote meanwhile; the owner is
 * read between the two, so a temporary file written into the successor's
 * lock is never renamed. The temporary file never stays.
 */
const commit = (file: string, holding: Holding, text: string): boolean => {
  const temporary = Path.join(holding.lock, `${holding.token}.tmp`)
  try {
    Fs.writeFileSync(temporary, text, { flag: "wx" })
    if (ownerOf(holding.lock) !== holding.owner) return false
    Fs.renameSync(temporary, file)
    return true
  } catch (error) {
    if (codeOf(error) === "ENOENT") return false
    throw error
  } finally {
    Fs.rmSync(temporary, { force: true })
  }
}

const serialize = (interactions: ReadonlyArray<Interaction>): string =>
  JSON.stringify({ format: "switchboard-cassette", version, interactions }, null, 2) + "\n"

/**
 * Merges `entry` under the lock into what is on disk: it takes the place of
 * the `place`-th recording with its key (`keyOf`), or goes at the end when
 * there are fewer; every other recording stays. Written whole (temporary
 * file, rename); when the lock was taken over before the rename, read,
 * merged and written again under a new one.
 */
const writeMerged = (
  file: string,
  entry: Interaction,
  place: number,
  keyOf: (entry: Interaction) => string
): CassetteFileError | undefined => {
  try {
    Fs.mkdirSync(Path.dirname(file), { recursive: true }) // the lock goes beside the file
    for (;;) {
      const written = locked(file, (holding) => {
        // Read afresh under the lock: another process may have written it a moment ago.
        const current = readFile(file, false)
        if (current instanceof CassetteFileError) return current
        const next = [...(current ?? [])]
        const key = keyOf(entry)
        let seen = 0
        const at = next.findIndex((other) => keyOf(other) === key && seen++ === place)
        if (at === -1) next.push(entry)
        else next[at] = entry
        const text = serialize(next)
        if (Buffer.byteLength(text) > maxFileBytes) return fileError(file, "too-large", `would grow past the ${maxFileBytes} bytes a cassette holds`)
        return commit(file, holding, text)
      })
      if (written !== false) return written === true ? undefined : written
    }
  } catch (error) {
    return fileError(file, "unwritable", `cannot be written (${String(error)})`)
  }
}

// ---------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    isRecord(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v)

/** Where `a` and `b` first differ (`body.messages[0].content`), and how many leaves differ. */
const differences = (a: unknown, b: unknown, at: string, found: Array<string>): void => {
  if (canonical(a) === canonical(b)) return
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) differences(a[i], b[i], `${at}[${i}]`, found)
    return
  }
  if (isRecord(a) && isRecord(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      differences(Object.hasOwn(a, key) ? a[key] : undefined, Object.hasOwn(b, key) ? b[key] : undefined, `${at}.${key}`, found)
    }
    return
  }
  found.push(at)
}

const keyDifferences = (sent: Key, recorded: Key): Array<string> => {
  const found: Array<string> = []
  if (sent.method !== recorded.method) found.push("method")
  if (sent.path !== recorded.path) found.push("path")
  differences(sent.body, recorded.body, "body", found)
  return found
}

const shown = (value: unknown): string => {
  const text = value === undefined ? "(absent)" : JSON.stringify(value)
  return text.length > 120 ? `${text.slice(0, 120)}…` : text
}

const valueAt = (key: Key, field: string): unknown => {
  if (field === "method" || field === "path") return key[field]
  let value: unknown = key.body
  for (const part of field.slice("body".length).match(/\.[^.[]+|\[\d+\]/g) ?? []) {
    const name = part.startsWith("[") ? Number(part.slice(1, -1)) : part.slice(1)
    value = Array.isArray(value) && typeof name === "number" ? value[name] :
      isRecord(value) && typeof name === "string" && Object.hasOwn(value, name) ? value[name] : undefined
  }
  return value
}

// ---------------------------------------------------------------------------
// The wire
// ---------------------------------------------------------------------------

const bodyOf = (text: string): { readonly body: unknown } | { readonly text: string } => {
  try {
    return { body: JSON.parse(text) }
  } catch {
    return { text }
  }
}

const encoder = new TextEncoder()

const replayText = (recorded: Recorded): string =>
  recorded.text ?? (recorded.body === undefined ? "" : JSON.stringify(recorded.body))

/** The wait before each recorded chunk, on the fiber's clock. */
const replayChunks = (chunks: ReadonlyArray<{ readonly at: number; readonly text: string }>): Stream.Stream<Uint8Array> =>
  Stream.mapEffect(Stream.fromIterable(chunks), (chunk, i) => {
    const wait = chunk.at - (i === 0 ? 0 : chunks[i - 1]!.at)
    const bytes = encoder.encode(chunk.text)
    return wait > 0 ? Effect.as(Effect.sleep(wait), bytes) : Effect.succeed(bytes)
  })

/**
 * Reads the mode from `SWITCHBOARD_CASSETTE` (default `replay`); an unknown
 * name is a `ConfigurationError`.
 *
 * @since 1.0.0
 * @category constructors
 */
export const modeFromEnvironment: Effect.Effect<Mode, ConfigurationError> = Effect.flatMap(
  Effect.orElseSucceed(fromEnvironment(Config.String("SWITCHBOARD_CASSETTE")), () => "replay"),
  (name: string) =>
    (modes as ReadonlyArray<string>).includes(name.trim()) ?
      Effect.succeed(name.trim() as Mode) :
      Effect.fail(
        new ConfigurationError({
          field: "SWITCHBOARD_CASSETTE",
          message: `SWITCHBOARD_CASSETTE is "${name}"; it must be one of ${modes.join(", ")}`
        })
      )
)

/**
 * The cassette's wire over the `HttpWire` provided (the real one, used when
 * recording or passing through), and the `Cassette` service.
 *
 * @since 1.0.0
 * @category layers
 */
export const layerWire = (
  options: Options
): Layer.Layer<HttpWire.HttpWire | Cassette, CassetteFileError | ConfigurationError, HttpWire.HttpWire> =>
  Layer.fresh(Layer.effectContext(Effect.gen(function*() {
    const real = yield* HttpWire.HttpWire
    const mode = options.mode ?? (yield* modeFromEnvironment)
    if (!modes.includes(mode)) {
      return yield* new ConfigurationError({ field: "mode", message: `mode "${String(mode)}" must be one of ${modes.join(", ")}` })
    }
    const file = Path.resolve(options.path)
    const read = mode === "passthrough" ? [] : readFile(file)
    if (read instanceof CassetteFileError) return yield* read
    if (read === undefined && mode === "replay") {
      return yield* fileError(file, "missing", `does not exist; record it first (mode "record" or "record-if-missing")`)
    }
    const interactions = mode === "record" ? [] : read ?? []
    const used = new Set<number>()
    /** Calls answered so far, by canonical key: a recording's place among its key's recordings. */
    const answered = new Map<string, number>()
    const count = (key: string) => {
      const n = answered.get(key) ?? 0
      answered.set(key, n + 1)
      return n
    }
    const misses: Array<CassetteMissError> = []
    const secretNames = new Set(["authorization", ...(options.secretHeaders ?? []).map((h) => h.toLowerCase())])
    const normalize = options.normalize ?? ((key: Key) => key)

    const keyOf = (request: HttpWire.Request): Key =>
      normalize({ method: request.method, path: Serve.pathOf(request.url), body: Serve.requestBody(request.body?.text) })

    const recordedKey = (entry: Interaction): Key =>
      normalize({ method: entry.request.method, path: entry.request.path, body: entry.request.body })

    const find = (key: Key): Interaction | CassetteMissError => {
      const wanted = canonical(key)
      for (const [i, entry] of interactions.entries()) {
        if (used.has(i) || canonical(recordedKey(entry)) !== wanted) continue
        used.add(i)
        count(wanted)
        return entry
      }
      return miss(key)
    }

    const miss = (key: Key): CassetteMissError => {
      let nearest: { readonly fields: Array<string>; readonly key: Key } | undefined
      for (const entry of interactions) {
        const recorded = recordedKey(entry)
        const fields = keyDifferences(key, recorded)
        if (nearest === undefined || fields.length < nearest.fields.length) nearest = { fields, key: recorded }
      }
      const field = nearest?.fields[0]
      const what = `${key.method} ${key.path}`
      const message = nearest === undefined ?
        `no recording in cassette ${file} for ${what}: the cassette is empty` :
        field === undefined ?
        `no recording left in cassette ${file} for ${what}: every identical recording was already replayed` :
        `no recording in cassette ${file} for ${what}: nearest differs at ${field}: sent ${shown(valueAt(key, field))}, recorded ${
          shown(valueAt(nearest.key, field))
        }`
      const error = new CassetteMissError({ file, request: key, field, message })
      misses.push(error)
      return error
    }

    /** The request and response as stored: no secret header, no secret value anywhere. */
    const store = (request: HttpWire.Request, response: Recorded) => {
      const secrets = Object.entries(request.headers)
        .filter(([name]) => secretNames.has(name.toLowerCase()))
        .flatMap(([, value]) => [value, value.replace(/^Bearer\s+/i, "")])
        .filter((value) => value.length >= 4)
      const headers = (all: Readonly<Record<string, string>>) =>
        Object.fromEntries(Object.entries(all).filter(([name]) => !secretNames.has(name.toLowerCase()) && name !== "traceparent"))
      const entry: Interaction = {
        request: { ...keyOf(request), headers: headers(request.headers) },
        response: { ...response, headers: headers(response.headers) }
      }
      let text = JSON.stringify(entry)
      for (const secret of secrets) text = text.split(JSON.stringify(secret).slice(1, -1)).join("[redacted]")
      return JSON.parse(text) as Interaction
    }

    const keyOfEntry = (entry: Interaction) => canonical(recordedKey(entry))
    const save = (entry: Interaction) =>
      Effect.suspend(() => {
        const failed = writeMerged(file, entry, count(keyOfEntry(entry)), keyOfEntry)
        // Surfaces as the call's `ResponseDecodeError`, its message the file's problem.
        return failed === undefined ? Effect.void : Effect.fail(new HttpWire.WireError({ reason: "decode", cause: failed }))
      })

    const recording = mode === "record" || mode === "record-if-missing"
    /** The event that ends a stream, with the blank line that dispatches it. */
    const doneEvent = /data: \[DONE\]\r?\n\r?\n/
    const decodeFailure = (error: CassetteMissError) => new HttpWire.WireError({ reason: "decode", cause: error })

    const wire: HttpWire.Service = {
      text: (request, limits, onHead) => {
        if (mode === "passthrough") return real.text(request, limits, onHead)
        const found = mode === "record" ? undefined : find(keyOf(request))
        if (found !== undefined && !(found instanceof CassetteMissError)) {
          // A replayed head is there at once.
          return Effect.sync(() => {
            onHead?.()
            return { status: found.response.status, headers: found.response.headers, text: replayText(found.response) }
          })
        }
        if (!recording) return Effect.fail(decodeFailure(found as CassetteMissError))
        if (found instanceof CassetteMissError) misses.pop()
        return Effect.tap(real.text(request, limits, onHead), (response) =>
          save(store(request, { status: response.status, headers: response.headers, ...bodyOf(response.text) })))
      },
      open: (request, limits) => {
        if (mode === "passthrough") return real.open(request, limits)
        const found = mode === "record" ? undefined : find(keyOf(request))
        if (found !== undefined && !(found instanceof CassetteMissError)) {
          const response = found.response
          return Effect.succeed({
            status: response.status,
            headers: response.headers,
            body: response.chunks === undefined ? Stream.make(encoder.encode(replayText(response))) : replayChunks(response.chunks),
            commit: () => {}
          })
        }
        if (!recording) return Effect.fail(decodeFailure(found as CassetteMissError))
        if (found instanceof CassetteMissError) misses.pop()
        return Effect.gen(function*() {
          const start = yield* Clock.currentTimeMillis
          const response = yield* real.open(request, limits)
          const decoder = new TextDecoder()
          const chunks: Array<{ at: number; text: string }> = []
          let saved = false
          const saveOnce = Effect.suspend(() => {
            if (saved || chunks.length === 0) return Effect.void
            saved = true
            return save(store(request, { status: response.status, headers: response.headers, chunks }))
          })
          const body = response.body.pipe(
            Stream.tap((bytes) =>
              Effect.flatMap(Clock.currentTimeMillis, (now) => {
                const text = decoder.decode(bytes, { stream: true })
                const last = chunks.at(-1)?.text ?? ""
                chunks.push({ at: now - start, text })
                // Saved with the chunk that ends the stream, so that a failed save fails the call: a reader
                // stops at `[DONE]` without reading the body's end.
                return doneEvent.test(`${last.slice(-20)}${text}`) ? saveOnce : Effect.void
              })
            ),
            // A body read to its end without `[DONE]` (a JSON reply) is saved there, failing the call if it must.
            Stream.concat(Stream.fromEffect(saveOnce).pipe(Stream.drain)),
            // A stream its reader stopped early is saved as far as it was read; its reader is gone, so a failed
            // save can only be logged.
            Stream.ensuring(Effect.catchCause(saveOnce, (cause) => Effect.logError("the cassette could not save a recording", cause)))
          )
          return { ...response, body }
        })
      }
    }
    const service: Service = { mode, misses: Effect.sync(() => [...misses]) }
    return Context.make(HttpWire.HttpWire, wire).pipe(Context.add(Cassette, service))
  })))

/**
 * What `layer` provides.
 *
 * @since 1.0.0
 * @category models
 */
export type Services =
  | Switchboard.Services
  | SwitchboardConfig.SwitchboardConfig
  | TaskJournal.TaskJournal
  | HttpWire.HttpWire
  | Cassette

/**
 * The whole SDK over the cassette, over the real `HttpWire` provided (e.g.
 * `NodeHttpWire.layer`), with an in-memory task journal. `baseUrl` and
 * `apiKey` are the real service's, used when recording.
 *
 * @since 1.0.0
 * @category layers
 */
export const layer = (
  options: Options & SwitchboardConfig.Options
): Layer.Layer<Services, CassetteFileError | ConfigurationError, HttpWire.HttpWire> =>
  Switchboard.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(SwitchboardConfig.layer(options), TaskJournal.layerMemory, layerWire(options)))
  )

/**
 * The misses so far.
 *
 * @since 1.0.0
 * @category accessors
 */
export const misses: Effect.Effect<ReadonlyArray<CassetteMissError>, never, Cassette> = Cassette.use((c) => c.misses)

/**
 * Runs `effect`; when it fails after a miss, the failure is the first
 * `CassetteMissError` (which names the differing field), not the SDK error
 * the call surfaced as.
 *
 * @since 1.0.0
 * @category combinators
 */
export const check = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | CassetteMissError, R | Cassette> =>
  Effect.flatMap(Effect.service(Cassette), (cassette) =>
    Effect.catch(effect, (error) =>
      Effect.flatMap(cassette.misses, (found): Effect.Effect<never, E | CassetteMissError> =>
        found[0] === undefined ? Effect.fail(error) : Effect.fail(found[0]))))
