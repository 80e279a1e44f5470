/**
 * `NodeSwitchboard.layer` builds its own services wherever it is provided:
 * Effect 4 memoizes layers by reference across nested `Effect.provide`s, and
 * a second SDK layer (another key, another journal) must not get the first
 * one's. Across real HTTP to the emulator.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Models, Switchboard, SwitchboardConfig, TaskJournal } from "@switchboard/core"
import * as HttpClientWire from "@switchboard/core/HttpClientWire"
import { Emulator } from "@switchboard/emulator"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import { NodeHttpWire, NodeSwitchboard } from "../src/index.js"

describe("NodeSwitchboard.layer inside another", () => {
  it.live("the inner layer's key is the one sent, the outer's calls keep theirs", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const inner = Effect.flip(Models.list).pipe(
        Effect.provide(NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: "sk-another-0123456789abcdef", maxRetries: 0 }))
      )
      const [error, models] = yield* Effect.all([inner, Models.list]).pipe(
        Effect.provide(NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
      )
      expect(error._tag).toBe("AuthenticationError")
      expect(models.map((m) => m.id)).toContain("gpt-4o-mini")
    }).pipe(Effect.provide(Emulator.layer())))
})

describe("core's layers inside another", () => {
  // Switchboard.layer and the layers it is made of are constants: each must
  // build with what its own provide gives it, not reuse the outer build.
  const composed = (options: SwitchboardConfig.Options) =>
    Switchboard.layer.pipe(
      Layer.provideMerge(SwitchboardConfig.layer(options)),
      Layer.provideMerge(TaskJournal.layerMemory),
      Layer.provide(NodeHttpWire.layer)
    )

  it.live("Switchboard.layer over another configuration sends that configuration's key", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const inner = Effect.flip(Models.list).pipe(
        Effect.provide(composed({ baseUrl: emulator.url, apiKey: "sk-another-0123456789abcdef", maxRetries: 0 }))
      )
      const [error, models] = yield* Effect.all([inner, Models.list]).pipe(
        Effect.provide(composed({ baseUrl: emulator.url, apiKey: emulator.apiKey }))
      )
      expect(error._tag).toBe("AuthenticationError")
      expect(models.map((m) => m.id)).toContain("gpt-4o-mini")
    }).pipe(Effect.provide(Emulator.layer())))

  it.live("HttpClientWire.layer over another HttpClient sends through that client", () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator
      const over = (client: Layer.Layer<HttpClient.HttpClient>) =>
        Switchboard.layer.pipe(
          Layer.provideMerge(SwitchboardConfig.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey, maxRetries: 0 })),
          Layer.provide(TaskJournal.layerMemory),
          Layer.provide(HttpClientWire.layer),
          Layer.provide(client)
        )
      // The inner client replaces the key the SDK sent.
      const wrongKey = Layer.effect(
        HttpClient.HttpClient,
        Effect.map(
          Effect.service(HttpClient.HttpClient),
          HttpClient.mapRequest(HttpClientRequest.setHeader("authorization", "Bearer sk-another-0123456789abcdef"))
        )
      ).pipe(Layer.provide(NodeHttpClient.layerUndici))
      const [error, models] = yield* Effect.all([Effect.flip(Models.list).pipe(Effect.provide(over(wrongKey))), Models.list]).pipe(
        Effect.provide(over(NodeHttpClient.layerUndici))
      )
      expect(error._tag).toBe("AuthenticationError")
      expect(models.map((m) => m.id)).toContain("gpt-4o-mini")
    }).pipe(Effect.provide(Emulator.layer())))
})

/** An emulator of its own, for the test's scope. */
const emulator = Effect.map(Layer.build(Emulator.layer()), Context.get(Emulator.Emulator))

/** `Models.list` as a program of its own (`Effect.runPromise`) started with `env`. */
const runWith = (env: Record<string, string>) =>
  Effect.promise(async () => {
    const before = { ...process.env }
    Object.assign(process.env, env)
    try {
      return await Effect.runPromise(
        Models.list.pipe(Effect.provide(NodeSwitchboard.layerConfig({ journal: TaskJournal.layerMemory })))
      )
    } finally {
      for (const name of Object.keys(env)) {
        if (before[name] === undefined) delete process.env[name]
        else process.env[name] = before[name]
      }
    }
  })

const listings = Effect.map(
  Effect.flatMap(Emulator.Emulator, (e) => e.requests),
  (requests) => requests.filter((r) => r.path === "/v1/models").length
)

describe("NodeSwitchboard.layerConfig in runs one after another", () => {
  // Effect 4 keeps its default ConfigProvider (a copy of process.env) for the
  // process's lifetime: each run must read the environment as it is then.
  it.live("each run reads the environment it starts with", () =>
    Effect.gen(function*() {
      const first = yield* emulator
      const second = yield* emulator
      yield* runWith({ SWITCHBOARD_BASE_URL: first.url, SWITCHBOARD_API_KEY: first.apiKey })
      yield* runWith({ SWITCHBOARD_BASE_URL: second.url, SWITCHBOARD_API_KEY: second.apiKey })
      expect(yield* Effect.provideService(listings, Emulator.Emulator, first)).toBe(1)
      expect(yield* Effect.provideService(listings, Emulator.Emulator, second)).toBe(1)
    }).pipe(Effect.scoped))
})
