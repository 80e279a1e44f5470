/**
 * The emulator as a load test's server: a client that opens more connections
 * at once than Node's default listen backlog (511) must not have its SYNs
 * dropped. The built emulator runs as a process that is stopped (SIGSTOP)
 * while the connections open, so it accepts none of them: the kernel
 * completes as many handshakes as the backlog holds, and a dropped one would
 * never complete while the process stays stopped. No clock: the test waits
 * for the connections, or fails at its own timeout.
 */
import * as Processes from "@switchboard/test-support/Processes"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const packageDir = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const connections = 1_000

const connected = (socket: Net.Socket) =>
  new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve)
    socket.once("error", reject)
  })

describe("listen backlog", () => {
  beforeAll(() => Processes.build(Path.join(packageDir, "tsconfig.build.json")), 300_000)
  afterAll(() => Processes.stopAll())

  it(`holds ${connections} connections opened at once while the emulator accepts none`, async () => {
    const emulator = Processes.start(Path.join(packageDir, "bin/switchboard-emulator.js"), ["--port", "0"], {
      cwd: packageDir,
      env: process.env
    })
    const line = await emulator.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, "stdout")
    const port = Number(/127\.0\.0\.1:(\d+)/.exec(line)?.[1])
    emulator.signal("SIGSTOP")
    const sockets: Array<Net.Socket> = []
    try {
      for (let i = 0; i < connections; i++) sockets.push(Net.connect(port, "127.0.0.1"))
      await Promise.all(sockets.map(connected))
      expect(sockets.filter((socket) => socket.readyState === "open")).toHaveLength(connections)
    } finally {
      for (const socket of sockets) socket.destroy()
      emulator.signal("SIGCONT")
      await emulator.kill()
    }
  })
})
