/**
 * Cassettes against the real emulator over real HTTP (NodeHttpWire), written
 * to real files: recorded with the emulator running, replayed once it has
 * stopped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent } from "@switchboard/agent"
import * as Chat from "@switchboard/core/Chat"
import * as Embeddings from "@switchboard/core/Embeddings"
import type * as Protocol from "@switchboard/core/Protocol"
import { Emulator } from "@switchboard/emulator"
import * as NodeHttpWire from "@switchboard/node/NodeHttpWire"
import * as Cassette from "@switchboard/testing/Cassette"
import { TestTime } from "@switchboard/testing"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const model = "gpt-4o-mini"
const ask = (content: string): Protocol.ChatRequest => ({ model, messages: [{ role: "user", content }] })

const GetWeather = Tool.make("get_weather", {
  description: "Current weather in a city",
  parameters: Schema.Struct({ city: Schema.String.annotate({ description: "City name" }) }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite })
})
const toolkit = Toolkit.make(GetWeather)
const handlers = toolkit.toLayer({ get_weather: ({ city }) => Effect.succeed({ city, celsius: 18 }) })

const tempFile = () => Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-cassette-")), "exchanges.json")

/** The recordings in `file`, as the file holds them (chat ones: their request bodies). */
const saved = (file: string) =>
  (JSON.parse(Fs.readFileSync(file, "utf8")) as { interactions: Array<{ request: { body: Protocol.ChatRequest } }> }).interactions

/** Everything the test program does: chat, a stream, embeddings, a tool agent run. */
const program = Effect.gen(function*() {
  const completion = yield* Chat.create(ask("Hello cassette"))
  const chunks = yield* Stream.runCollect(Chat.stream(ask("Stream me something")))
  const vectors = yield* Embeddings.embedMany(["a", "b"], { model: "text-embedding-3-small" })
  const run = yield* Agent.run({ model, toolkit, messages: [{ role: "user", content: "Use get_weather for Paris" }] })
  return { completion, chunks, vectors, answer: run.text, transcript: run.transcript }
}).pipe(Effect.provide(handlers))

/** The SDK over the cassette in `mode`, for the emulator's address and key. */
const over = (file: string, mode: Cassette.Mode, url: string, apiKey: string) =>
  Cassette.layer({ path: file, mode, baseUrl: url, apiKey }).pipe(Layer.provide(NodeHttpWire.layer))

/** Records `effect` against an emulator, which is stopped when this returns. */
const recorded = <A, E, R>(file: string, effect: Effect.Effect<A, E, R>, options: Emulator.Options = {}) =>
  Effect.gen(function*() {
    const emulator = yield* Emulator.Emulator
    const value = yield* Effect.provide(effect, over(file, "record", emulator.url, emulator.apiKey))
    return { value, url: emulator.url, apiKey: emulator.apiKey }
  }).pipe(Effect.provide(Emulator.layer(options)))

describe("Cassette", () => {
  it.live("records chat, a stream, embeddings and an agent run, and replays them with the emulator stopped", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const live = yield* recorded(file, program)
      const replayed = yield* Effect.provide(program, over(file, "replay", live.url, live.apiKey))
      expect(replayed).toEqual(live.value)
      const text = Fs.readFileSync(file, "utf8")
      expect(text).not.toContain(live.apiKey)
      expect(text.toLowerCase()).not.toContain("authorization")
      const saved = JSON.parse(text) as { format: string; version: number; interactions: Array<unknown> }
      expect([saved.format, saved.version, saved.interactions.length]).toEqual(["switchboard-cassette", 1, 5])
    }))

  it.live("a changed prompt misses, typed, naming the first differing field and both values", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const live = yield* recorded(file, Chat.create(ask("Hello cassette")))
      const error = yield* Effect.flip(
        Cassette.check(Chat.create(ask("Hello casette"))).pipe(Effect.provide(over(file, "replay", live.url, live.apiKey)))
      )
      expect(error._tag).toBe("CassetteMissError")
      expect(error).toMatchObject({ field: "body.messages[0].content" })
      expect(error.message).toContain(`nearest differs at body.messages[0].content: sent "Hello casette", recorded "Hello cassette"`)
      const surfaced = yield* Effect.flip(Chat.create(ask("Other")).pipe(Effect.provide(over(file, "replay", live.url, live.apiKey))))
      expect(surfaced._tag).toBe("ResponseDecodeError")
      expect(surfaced.message).toContain("no recording in cassette")
    }))

  it.live("identical requests replay in recorded order; one more than recorded misses", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const both = Effect.all([Chat.create(ask("same")), Chat.create(ask("same"))])
      const live = yield* recorded(file, both)
      const replay = over(file, "replay", live.url, live.apiKey)
      expect(yield* Effect.provide(both, replay)).toEqual(live.value)
      const third = yield* Effect.flip(
        Cassette.check(Effect.andThen(both, Chat.create(ask("same")))).pipe(Effect.provide(replay))
      )
      expect(third.message).toContain("every identical recording was already replayed")
    }))

  it.live("record-if-missing replays what it has and records the rest", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const emulator = yield* Emulator.Emulator
      const layer = over(file, "record-if-missing", emulator.url, emulator.apiKey)
      yield* Effect.provide(Chat.create(ask("first")), layer)
      yield* Effect.provide(Effect.all([Chat.create(ask("first")), Chat.create(ask("second"))]), layer)
      const requests = yield* emulator.requests
      expect(requests.filter((r) => r.path.endsWith("/chat/completions")).length).toBe(2)
      expect(saved(file).length).toBe(2)
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("layers recording one after another keep each other's recordings; a request recorded again takes its own place", () =>
    Effect.gen(function*() {
      // As a suite's tests (or a runner's workers) each building the layer in "record" mode.
      const file = tempFile()
      const emulator = yield* Emulator.Emulator
      const record = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provide(effect, over(file, "record", emulator.url, emulator.apiKey))
      const prompts = () => saved(file).map((i) => i.request.body.messages[0]!.content)
      yield* record(Chat.create(ask("first")))
      yield* record(Chat.create(ask("second")))
      expect(prompts()).toEqual(["first", "second"])
      const replay = over(file, "replay", emulator.url, emulator.apiKey)
      yield* Effect.provide(Effect.all([Chat.create(ask("first")), Chat.create(ask("second"))]), replay)
      // Recorded again: the new recording replaces the old one, in its place.
      yield* record(Chat.create(ask("first")))
      expect(prompts()).toEqual(["first", "second"])
      // Twice in one layer: a second place; a later layer calling it once replaces the first place only.
      yield* record(Effect.all([Chat.create(ask("first")), Chat.create(ask("first"))]))
      yield* record(Chat.create(ask("first")))
      expect(prompts()).toEqual(["first", "second", "first"])
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("records into a directory that does not exist yet", () =>
    Effect.gen(function*() {
      const file = Path.join(Path.dirname(tempFile()), "cassettes", "new", "exchanges.json")
      const live = yield* recorded(file, Chat.create(ask("Hello cassette")))
      expect(yield* Effect.provide(Chat.create(ask("Hello cassette")), over(file, "replay", live.url, live.apiKey))).toEqual(live.value)
    }))

  // What a writer leaves when it dies or hangs while writing, planted beside
  // the file; time stamps are set back, nothing waits.
  const leftBehind: ReadonlyArray<readonly [string, (file: string) => void]> = [
    ["a lock and a half-written temporary file left by a writer that died", (file) => {
      const dead = ChildProcess.spawnSync(process.execPath, ["-e", ""]).pid
      Fs.mkdirSync(`${file}.lock`)
      Fs.writeFileSync(`${file}.lock/owner`, `${Os.hostname()} ${dead}`)
      // A writer's temporary file is inside its lock.
      Fs.writeFileSync(`${file}.lock/k2x9.tmp`, `{"format":"switchboard-cassette","version":1,"interactions":[{"req`)
    }],
    ["a lock held past 30 s by its time stamp (its owner, this process, alive), and a remover's lock left behind", (file) => {
      const past = new Date(Date.now() - 60_000)
      for (const lock of [`${file}.lock`, `${file}.lock.break`]) {
        Fs.mkdirSync(lock)
        Fs.writeFileSync(`${lock}/owner`, `${Os.hostname()} ${process.pid} hung`)
        Fs.utimesSync(lock, past, past)
      }
    }]
  ]
  for (const [what, plant] of leftBehind) {
    it.live(`${what}: taken over and cleared by the next recording`, () =>
      Effect.gen(function*() {
        const file = tempFile()
        const emulator = yield* Emulator.Emulator
        const record = (content: string) => Effect.provide(Chat.create(ask(content)), over(file, "record", emulator.url, emulator.apiKey))
        yield* record("before")
        plant(file)
        yield* record("after")
        expect(Fs.readdirSync(Path.dirname(file))).toEqual([Path.basename(file)])
        expect(saved(file).map((i) => i.request.body.messages[0]!.content)).toEqual(["before", "after"])
      }).pipe(Effect.provide(Emulator.layer())))
  }

  it.live("a recording that cannot be saved fails its call, a stream's too: nothing is lost unsaid", () =>
    Effect.gen(function*() {
      // The cassette's directory is a regular file: every save fails.
      const blocker = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchboard-cassette-")), "blocker")
      Fs.writeFileSync(blocker, "")
      const file = Path.join(blocker, "exchanges.json")
      const emulator = yield* Emulator.Emulator
      const layer = over(file, "record", emulator.url, emulator.apiKey)
      const call = yield* Effect.flip(Effect.provide(Chat.create(ask("Hello cassette")), layer))
      expect(call._tag).toBe("ResponseDecodeError")
      const stream = yield* Effect.flip(Effect.provide(Stream.runCollect(Chat.stream(ask("Stream me something"))), layer))
      expect(stream._tag).toBe("ResponseDecodeError")
      expect(stream.message).toContain(file)
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("a recording holding __proto__ keys replays as recorded and changes no prototype", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const live = yield* recorded(file, Chat.create(ask("plain")))
      const text = Fs.readFileSync(file, "utf8")
        .replace(`"messages"`, `"__proto__": { "polluted": true }, "messages"`)
        .replace(`"content-type"`, `"__proto__": "x", "content-type"`)
      Fs.writeFileSync(file, text)
      const request = JSON.parse(`{"__proto__": { "polluted": true }, "model": "${model}", "messages": [{ "role": "user", "content": "plain" }]}`) as Protocol.ChatRequest
      const replay = over(file, "replay", live.url, live.apiKey)
      expect(yield* Effect.provide(Chat.create(request), replay)).toEqual(live.value)
      expect(Object.getPrototypeOf({})).toBe(Object.prototype)
      expect("polluted" in {}).toBe(false)
    }))

  it.effect("20 replays of a paced stream run on the test clock, each with the recorded output and waits", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const texts = (request: Protocol.ChatRequest) => Stream.runCollect(Chat.streamText(request))
      const live = yield* TestTime.run(recorded(file, texts(ask("Tell me a long story please")), { stream: { interval: "50 millis" } }))
      const saved = JSON.parse(Fs.readFileSync(file, "utf8")) as {
        interactions: Array<{ response: { chunks: Array<{ at: number }> } }>
      }
      const chunks = saved.interactions[0]!.response.chunks
      expect(chunks.at(-1)!.at).toBeGreaterThan(0)
      for (let i = 0; i < 20; i++) {
        const again = yield* TestTime.run(Effect.gen(function*() {
          const value = yield* texts(ask("Tell me a long story please"))
          return { value, slept: yield* TestTime.slept }
        })).pipe(Effect.provide(over(file, "replay", live.url, live.apiKey)))
        expect(again.value).toEqual(live.value)
        expect(again.slept.reduce((a, b) => a + b, 0)).toBe(chunks.at(-1)!.at - chunks[0]!.at + chunks[0]!.at)
      }
    }))

  it.effect("an unknown mode in SWITCHBOARD_CASSETTE fails at layer build with a ConfigurationError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Layer.build(Cassette.layerWire({ path: tempFile() }).pipe(Layer.provide(NodeHttpWire.layer))).pipe(
          Effect.scoped,
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ SWITCHBOARD_CASSETTE: "rewind" })))
        )
      )
      expect(error).toMatchObject({ _tag: "ConfigurationError", field: "SWITCHBOARD_CASSETTE" })
      expect(error.message).toContain(`"rewind"; it must be one of replay, record, record-if-missing, passthrough`)
    }))

  const broken = [
    ["truncated", `{"format":"switchboard-cassette","version":1,"interactions":[{"request":`],
    ["corrupt", `{"format":"switchboard-cassette","version":1,"interactions":[}]`],
    ["newer-version", `{"format":"switchboard-cassette","version":2,"interactions":[]}`],
    ["corrupt", `{"version":1}`],
    // A hand-edited or hostile recording: each field the replay reads is checked when the file is read.
    ...[
      `"response":{"status":200}`,
      `"response":{"status":200,"headers":{"content-type":7}}`,
      `"response":{"status":"200","headers":{}}`,
      `"response":{"status":200,"headers":{},"chunks":[{"at":"soon","text":"data: {}"}]}`,
      `"response":{"status":200,"headers":{},"chunks":[{"at":-5,"text":"data: {}"}]}`,
      `"response":{"status":200,"headers":{},"text":{"not":"text"}}`
    ].map((response) =>
      [
        "corrupt",
        `{"format":"switchboard-cassette","version":1,"interactions":[{"request":{"method":"POST","path":"/chat/completions"},${response}}]}`
      ] as const
    )
  ] as const
  for (const [problem, text] of broken) {
    it.effect(`a ${problem} file is a typed error naming it, and a replay leaves it as it was`, () =>
      Effect.gen(function*() {
        const file = tempFile()
        Fs.writeFileSync(file, text)
        for (const mode of ["replay", "record-if-missing", "record"] as const) {
          const error = yield* Effect.flip(
            Layer.build(Cassette.layerWire({ path: file, mode }).pipe(Layer.provide(NodeHttpWire.layer))).pipe(Effect.scoped)
          )
          expect(error).toMatchObject({ _tag: "CassetteFileError", file, problem })
          expect(error.message).toContain(file)
          if (text.includes(`"response"`)) expect(error.message).toContain("interactions[0].response")
        }
        expect(Fs.readFileSync(file, "utf8")).toBe(text)
      }))
  }

  it.effect("a file too large to read, or not a regular file, is a typed error and is not read", () =>
    Effect.gen(function*() {
      const file = tempFile()
      Fs.writeFileSync(file, "")
      Fs.truncateSync(file, 128 * 1024 * 1024 + 1) // sparse: nothing written
      const directory = Path.join(Path.dirname(file), "a-directory.json")
      Fs.mkdirSync(directory)
      for (const mode of ["replay", "record-if-missing", "record"] as const) {
        const build = (path: string) =>
          Effect.flip(Layer.build(Cassette.layerWire({ path, mode }).pipe(Layer.provide(NodeHttpWire.layer))).pipe(Effect.scoped))
        expect(yield* build(file)).toMatchObject({ _tag: "CassetteFileError", problem: "too-large" })
        expect(yield* build(directory)).toMatchObject({ _tag: "CassetteFileError", problem: "corrupt" })
      }
    }))

  it.effect("a replay of a file that does not exist says to record it", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const error = yield* Effect.flip(
        Layer.build(Cassette.layerWire({ path: file, mode: "replay" }).pipe(Layer.provide(NodeHttpWire.layer))).pipe(Effect.scoped)
      )
      expect(error).toMatchObject({ _tag: "CassetteFileError", problem: "missing" })
      expect(Fs.existsSync(file)).toBe(false)
    }))

  it.live("passthrough sends every call and writes nothing", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const emulator = yield* Emulator.Emulator
      yield* Effect.provide(Chat.create(ask("through")), over(file, "passthrough", emulator.url, emulator.apiKey))
      expect((yield* emulator.requests).length).toBe(1)
      expect(Fs.existsSync(file)).toBe(false)
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("normalize decides what must match: a field left out may differ", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const withoutUser = (key: Cassette.Key): Cassette.Key => {
        const { user: _user, ...body } = key.body as Record<string, unknown>
        return { ...key, body }
      }
      const live = yield* recorded(file, Chat.create({ ...ask("Hi"), user: "alice" }))
      const layer = Cassette.layer({ path: file, mode: "replay", baseUrl: live.url, apiKey: live.apiKey, normalize: withoutUser })
        .pipe(Layer.provide(NodeHttpWire.layer))
      expect(yield* Effect.provide(Chat.create({ ...ask("Hi"), user: "bob" }), layer)).toEqual(live.value)
    }))

  it.live("a header marked secret, and its value anywhere, stay out of the file", () =>
    Effect.gen(function*() {
      const file = tempFile()
      const emulator = yield* Emulator.Emulator
      const layer = Cassette.layer({
        path: file,
        mode: "record",
        baseUrl: emulator.url,
        apiKey: emulator.apiKey,
        headers: { "x-tenant-token": "tenant-secret-42" },
        secretHeaders: ["X-Tenant-Token"]
      }).pipe(Layer.provide(NodeHttpWire.layer))
      yield* Effect.provide(Chat.create(ask("my token is tenant-secret-42")), layer)
      const text = Fs.readFileSync(file, "utf8")
      expect(text).not.toContain("tenant-secret-42")
      expect(text).not.toContain("x-tenant-token")
      expect(text).toContain("[redacted]")
    }).pipe(Effect.provide(Emulator.layer())))
})
