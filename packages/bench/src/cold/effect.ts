/**
 * Cold start, `effect` alone: import its runtime and run one Effect, no
 * request. What any Effect program pays before it does anything.
 * `node dist/cold/effect.js`.
 */
import { fail, imported } from "./report.js"
import * as Effect from "effect/Effect"

imported()

Effect.runPromise(Effect.succeed(1)).then((n) => {
  if (n !== 1) fail("unexpected result")
}, fail)
