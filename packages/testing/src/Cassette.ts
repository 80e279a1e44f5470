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
 * - `record`: every call goes to the real wire and is recorded; what the
 *   file held when the layer was built is replaced, what other processes add
 *   meanwhile is kept.
 * - `record-if-missing`: replays what matches, records the rest.
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
 * recording into one file lose nothing.
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
import * as Fs from "node:fs"
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
 * `truncated`, `corrupt`, `newer-version`, `unwritable`). A replay never
 * writes the file.
 *
 * @since 1.0.0
 * @category errors
 */
export class CassetteFileError extends Data.TaggedError("CassetteFileError")<{
  readonly file: string
  readonly problem: "missing" | "truncated" | "corrupt" | "newer-version" | "unwritable"
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
  const interactions = json["interactions"]
  if (!Array.isArray(interactions)) return fileError(file, "corrupt", `has no "interactions" array`)
  for (const [i, entry] of interactions.entries()) {
    const ok = isRecord(entry) && isRecord(entry["request"]) && isRecord(entry["response"]) &&
      typeof entry["request"]["method"] === "string" && typeof entry["request"]["path"] === "string" &&
      typeof entry["response"]["status"] === "number"
    if (!ok) return fileError(file, "corrupt", `interactions[${i}] lacks request.method, request.path or response.status`)
  }
  parsed.set(file, { size: stat.size, mtimeMs: stat.mtimeMs, interactions })
  return interactions as ReadonlyArray<Interaction>
}

const sleepSync = (millis: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, millis)

/** Runs `f` holding the file's lock (a directory beside it); a lock older than 30 s is taken over. */
const locked = <A>(file: string, f: () => A): A => {
  const lock = `${file}.lock`
  for (let tries = 0;; tries++) {
    try {
      Fs.mkdirSync(lock)
      break
    } catch (error) {
      if ((error as { readonly code?: unknown }).code !== "EEXIST") throw error
      const age = Date.now() - (Fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > 30_000 || tries > 3000) Fs.rmSync(lock, { recursive: true, force: true })
      else sleepSync(5)
    }
  }
  try {
    return f()
  } finally {
    Fs.rmSync(lock, { recursive: true, force: true })
  }
}

const serialize = (interactions: ReadonlyArray<Interaction>): string =>
  JSON.stringify({ format: "switchboard-cassette", version, interactions }, null, 2) + "\n"

/** Merges under the lock: what is on disk, less `drop`, plus `add`; written whole (temporary file, rename). */
const writeMerged = (file: string, drop: ReadonlySet<string>, add: ReadonlyArray<Interaction>): CassetteFileError | undefined => {
  try {
    return locked(file, () => {
      // Read afresh under the lock: another process may have written it a moment ago.
      const current = readFile(file, false)
      if (current instanceof CassetteFileError) return current
      const kept = (current ?? []).filter((entry) => !drop.has(JSON.stringify(entry)))
      Fs.mkdirSync(Path.dirname(file), { recursive: true })
      const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
      Fs.writeFileSync(temporary, serialize([...kept, ...add]))
      Fs.renameSync(temporary, file)
      return undefined
    })
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
    const replaced = new Set(mode === "record" ? (read ?? []).map((entry) => JSON.stringify(entry)) : [])
    const used = new Set<number>()
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

    const recorded: Array<Interaction> = []
    const save = (entry: Interaction) =>
      Effect.suspend(() => {
        recorded.push(entry)
        const failed = writeMerged(file, replaced, recorded.splice(0))
        // Surfaces as the call's `ResponseDecodeError`, its message the file's problem.
        return failed === undefined ? Effect.void : Effect.fail(new HttpWire.WireError({ reason: "decode", cause: failed }))
      })

    const recording = mode === "record" || mode === "record-if-missing"
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
          const body = response.body.pipe(
            Stream.tap((bytes) =>
              Effect.map(Clock.currentTimeMillis, (now) => void chunks.push({ at: now - start, text: decoder.decode(bytes, { stream: true }) }))
            ),
            // When the stream closes: a reader stops at `[DONE]` without reading the body's end.
            Stream.ensuring(Effect.ignore(Effect.suspend(() =>
              chunks.length === 0 ? Effect.void : save(store(request, { status: response.status, headers: response.headers, chunks }))
            )))
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
