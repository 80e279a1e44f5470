import { defaultClientConditions, defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

// Workspace packages export their TypeScript sources under the
// "@switchboard/source" condition, so tests run against src without a build.
// A custom list replaces vite's defaults, hence the spread.
const source = "@switchboard/source"

export default defineConfig({
  resolve: { conditions: [source, ...defaultClientConditions] },
  // Without "module": Node loads what is resolved here, and @opentelemetry's
  // "module" build is for bundlers (its imports have no file extension).
  ssr: { resolve: { conditions: [source, ...defaultServerConditions.filter((c) => c !== "module")] } },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
