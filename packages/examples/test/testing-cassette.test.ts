import { expect, it } from "@effect/vitest"
import { Emulator } from "@switchboard/emulator"
import * as NodeHttpWire from "@switchboard/node/NodeHttpWire"
import * as Cassette from "@switchboard/testing/Cassette"
import * as Chat from "@switchboard/core/Chat"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const program = Effect.all({
  answer: Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello" }] }),
  story: Stream.mkString(Chat.streamText({ model: "gpt-4o-mini", messages: [{ role: "user", content: "A story" }] }))
})

// A real wire below the cassette: used when recording.
const cassette = (path: string, mode: Cassette.Mode, baseUrl: string, apiKey: string) =>
  Cassette.layer({ path, mode, baseUrl, apiKey }).pipe(Layer.provide(NodeHttpWire.layer))

it.live("recorded against the emulator, replayed with the emulator stopped", () =>
  Effect.gen(function*() {
    const path = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "cassette-")), "hello.json")
    // Record: the emulator runs only inside this scope.
    const recorded = yield* Effect.gen(function*() {
      const { apiKey, url } = yield* Emulator.Emulator
      return { url, apiKey, value: yield* Effect.provide(program, cassette(path, "record", url, apiKey)) }
    }).pipe(Effect.provide(Emulator.layer()))
    // Replay: nothing listens at the address any more.
    const replayed = yield* Effect.provide(program, cassette(path, "replay", recorded.url, recorded.apiKey))
    expect(replayed).toEqual(recorded.value)
    expect(Fs.readFileSync(path, "utf8")).not.toContain(recorded.apiKey)
  }))
