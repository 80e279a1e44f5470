/**
 * What importing the Node layer loads, in a fresh process over the built
 * package: not `@effect/platform-node-shared`'s file system, which a layer
 * that touches files loads when it is first built (`internal/platform.ts`;
 * docs/decisions.md, "Cold start: the file system on first use"). That those
 * layers still work is what the journal, media and attachment tests show.
 */
import * as Processes from "@switchboard/test-support/Processes"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, expect, it } from "vitest"

const here = Path.dirname(fileURLToPath(import.meta.url))

beforeAll(() => Processes.build(Path.join(Processes.repoRoot, "packages/node/tsconfig.build.json")), 300_000)
afterAll(() => Processes.stopAll())

it("importing @switchboard/node loads nothing of @effect/platform-node-shared", { timeout: 60_000 }, async () => {
  const { code, stderr, stdout } = await Processes.start(Path.join(here, "imports/loaded.mjs"), [], { cwd: here, env: process.env }).exited
  expect(code, stderr).toBe(0)
  const loaded = stdout.split("\n").filter((url) => url !== "")
  expect(loaded.some((url) => url.endsWith("/packages/node/dist/NodeTaskJournal.js"))).toBe(true)
  expect(loaded.filter((url) => url.includes("platform-node-shared"))).toEqual([])
})
