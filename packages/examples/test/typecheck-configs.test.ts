/**
 * `pnpm typecheck` (scripts/typecheck.mjs) checks the workspace in two
 * programs, tsconfig.check-node.json and tsconfig.check-dom.json, not per
 * package: every directory a package's own tsconfig.json includes (what an
 * editor checks) must be in the one of them with the same `lib` and `types`,
 * so a new package or directory is never left out of the check.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const root = fileURLToPath(new URL("../../..", import.meta.url))

interface Config {
  readonly compilerOptions?: { readonly lib?: ReadonlyArray<string>; readonly types?: ReadonlyArray<string> }
  readonly include?: ReadonlyArray<string>
}
const read = (path: string): Config => JSON.parse(Fs.readFileSync(Path.join(root, path), "utf8")) as Config
const baseLib = read("tsconfig.base.json").compilerOptions?.lib
const optionsOf = (config: Config) =>
  JSON.stringify({ lib: config.compilerOptions?.lib ?? baseLib, types: config.compilerOptions?.types })

it("every package's included directories are in the check program with its options", () => {
  const checks = ["tsconfig.check-node.json", "tsconfig.check-dom.json"].map(read)
  const wanted: Array<[string, string]> = []
  const found: Array<[string, string]> = []
  for (const dir of Fs.readdirSync(Path.join(root, "packages")).sort()) {
    const path = `packages/${dir}/tsconfig.json`
    if (!Fs.existsSync(Path.join(root, path))) continue
    const config = read(path)
    for (const include of config.include ?? []) {
      const target = `packages/${dir}/${include}`
      wanted.push([target, optionsOf(config)])
      const check = checks.find((c) => c.include?.includes(target))
      found.push([target, check === undefined ? "in neither check config" : optionsOf(check)])
    }
  }
  expect(wanted.length).toBeGreaterThan(20)
  expect(found).toEqual(wanted)
})
