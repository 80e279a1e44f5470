/**
 * The emulator as a bench server, run in its own process by a figure that
 * needs the service's behaviour rather than a fixed answer (the agent-load
 * figure: tool calls over several steps). It speaks the loopback server's IPC:
 * `ready` with the port, `cpu` answered with `process.cpuUsage()`, `stop`; it
 * stops when its parent goes away too. It keeps no recorded requests, so its
 * memory stays flat over a long run.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Emulator } from "@switchboard/emulator"
import * as Effect from "effect/Effect"
import { apiKey } from "./lib/fixtures.js"
import type { ParentToServer, ServerToParent } from "./lib/ipc.js"

const tell = (message: ServerToParent) => process.send?.(message)

const main = Effect.gen(function*() {
  const emulator = yield* Emulator.Emulator
  tell({ type: "ready", port: Number(new URL(emulator.url).port) })
  yield* Effect.callback<void>((resume) => {
    process.on("message", (message: ParentToServer) => {
      if (message.type === "cpu") tell({ type: "cpu", id: message.id, usage: process.cpuUsage() })
      else resume(Effect.void)
    })
    process.on("disconnect", () => resume(Effect.void))
  })
}).pipe(
  Effect.provide(Emulator.layer({ apiKey, cors: false, limits: { recordedRequests: 0, recordedBytes: 0 } })),
  // The IPC channel would keep the process alive once the emulator is closed.
  Effect.andThen(Effect.sync(() => process.exit(0)))
)

NodeRuntime.runMain(main)
