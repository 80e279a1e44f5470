import { Chat, Models } from "@switchboard/core"
import { Emulator } from "@switchboard/emulator"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { afterAll, describe, expect, it } from "vitest"
import { NodeSwitchboard } from "../src/index.js"

const emulatorRuntime = ManagedRuntime.make(Emulator.layer())
afterAll(() => emulatorRuntime.dispose())

describe("NodeSwitchboard.runtime", () => {
  it("runs many calls from promise code over one set of services, until disposed", async () => {
    const emulator = await emulatorRuntime.runPromise(Emulator.Emulator)
    const switchboard = NodeSwitchboard.runtime({ baseUrl: emulator.url, apiKey: emulator.apiKey })
    try {
      const [models, reply] = await Promise.all([
        switchboard.runPromise(Models.list),
        switchboard.runPromise(Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }))
      ])
      expect(models.map((m) => m.id)).toContain("gpt-4o-mini")
      expect(reply.choices[0]?.message.content).toContain("You said: \"Hi\"")
    } finally {
      await switchboard.dispose()
    }
    await expect(switchboard.runPromise(Models.list)).rejects.toThrow()
  })
})
