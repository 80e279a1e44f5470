// Imports the built Node layer's index as an application does, then prints
// the URL of every module that import loaded, one per line.
import { registerHooks } from "node:module"
import process from "node:process"

const loaded = []
registerHooks({
  load: (url, context, next) => {
    loaded.push(url)
    return next(url, context)
  }
})
await import("@switchboard/node")
process.stdout.write(`${loaded.join("\n")}\n`)
