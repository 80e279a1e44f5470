/**
 * A consumer's test of its agent with @switchboard/testing, from the packed
 * tarballs: a two-tool agent run answered by a script, with the base URL at
 * a port where nothing listens (nothing may be sent), then a script that
 * disagrees with the program (a tool the program does not offer), which must
 * fail with the kit's typed error saying so. scripts/consumer/run.mjs
 * compiles and runs it; it prints one JSON line of results.
 */
import { Agent } from "@switchboard/agent"
import { Reply, ScriptedModel, TestTime } from "@switchboard/testing"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { strict as assert } from "node:assert"

const Add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ sum: Schema.Finite })
})
const Double = Tool.make("double", {
  description: "Doubles a number",
  parameters: Schema.Struct({ n: Schema.Number }),
  success: Schema.Struct({ doubled: Schema.Finite })
})
const toolkit = Toolkit.make(Add, Double)
const handlers = toolkit.toLayer({
  add: ({ a, b }) => Effect.succeed({ sum: a + b }),
  double: ({ n }) => Effect.succeed({ doubled: n * 2 })
})

// The program under test.
const solve = Agent.run({ model: "gpt-4o-mini", toolkit, messages: [{ role: "user", content: "(2 + 3) * 2?" }] })

// Port 9 (discard) on the loopback: nothing listens there.
const closed = { baseUrl: "http://127.0.0.1:9", apiKey: "sk-none" }

const agrees = TestTime.run(Effect.gen(function*() {
  const result = yield* solve
  assert.equal(result.text, "It is 10.")
  assert.deepEqual(result.steps.flatMap((s) => s.toolResults.map((r) => `${r.name}:${r.content}`)), [
    `add:{"sum":5}`,
    `double:{"doubled":10}`
  ])
  yield* ScriptedModel.assertComplete
  return result.text
})).pipe(
  Effect.provide(handlers),
  Effect.provide(ScriptedModel.layer([
    Reply.toolCall("add", { a: 2, b: 3 }),
    Reply.error(503, { headers: { "retry-after": "1" } }),
    Reply.toolCall("double", { n: 5 }),
    Reply.text("It is 10.")
  ], closed))
)

const disagrees = ScriptedModel.check(solve).pipe(
  Effect.flip,
  Effect.map((error) => ({ tag: error._tag, message: error.message })),
  Effect.provide(handlers),
  Effect.provide(ScriptedModel.layer([Reply.toolCall("multiply", { a: 5, b: 2 })], closed))
)

const results = await Effect.runPromise(Effect.all({ passed: agrees, failed: disagrees }))
process.stdout.write(JSON.stringify(results) + "\n")
