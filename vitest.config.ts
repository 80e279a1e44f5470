import { availableParallelism } from "node:os"
import { defaultClientConditions, defaultServerConditions } from "vite"
import { configDefaults, defineConfig } from "vitest/config"

// Workspace packages export their TypeScript sources under the
// "@switchboard/source" condition, so tests run against src without a build.
// A custom list replaces vite's defaults, hence the spread.
const source = "@switchboard/source"

// The workflow package's fleets: runners on Postgres, killed, joined and
// handing shards over, with waits bounded for a loaded machine. They run one
// file at a time, after the rest, as the whole suite did before: two fleets at
// once beside other files, at load 60–90, left a handover unfinished in 200 s.
const fleets = ["packages/workflow/test/processes.test.ts", "packages/workflow/test/*.processes.test.ts"]

export default defineConfig({
  resolve: { conditions: [source, ...defaultClientConditions] },
  // Without "module": Node loads what is resolved here, and @opentelemetry's
  // "module" build is for bundlers (its imports have no file extension).
  ssr: { resolve: { conditions: [source, ...defaultServerConditions.filter((c) => c !== "module")] } },
  test: {
    // Bounds for a loaded machine (files run at once compete for its cores
    // too): a test that ends never waits for them, a hung one fails at them.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    projects: [
      {
        extends: true,
        test: {
          name: "tests",
          include: ["packages/*/test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...fleets],
          // At least 3 files at once (vitest's default is one fewer than the
          // cores: 1 on 2 cores). The suite mostly waits (on child processes,
          // Postgres, Chromium, sockets): one file at a time, it used 28 % of a
          // core's time over its wall time. Files that listen on ports of their
          // own choosing take them from test-support/Ports.ts, apart per file
          // (docs/decisions.md, "The test suite's wall time").
          maxWorkers: Math.max(3, availableParallelism() - 1),
          sequence: { groupOrder: 0 }
        }
      },
      { extends: true, test: { name: "fleets", include: fleets, maxWorkers: 1, sequence: { groupOrder: 1 } } }
    ]
  }
})
