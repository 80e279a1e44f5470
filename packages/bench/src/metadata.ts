/**
 * What a call's response metadata costs, in one process:
 * `node dist/metadata.js <port> [rounds] [calls]`. One runtime over
 * `NodeSwitchboard.layer`; each round runs `calls` non-streaming
 * `Chat.create` at concurrency 32 for each way of calling, their order
 * rotated from round to round (A B C, B C A, …) so that load from other
 * processes falls on all three; prints one JSON line: client CPU per call
 * (user + system, µs), per way, per round.
 */
import { Chat, type ResponseMetadata, Switchboard } from "@switchboard/core"
import * as Effect from "effect/Effect"
import { checkCompletion, deadline, pool } from "./clients/common.js"
import { runtimeFor } from "./clients/switchboard.js"
import { chatRequest } from "./lib/fixtures.js"

/** The reply's metadata read as a program would, so that none of it is left unused. */
const checkReply = (response: ResponseMetadata.ResponseMetadata) => {
  if (response.status !== 200 || response.timings.firstByte === undefined) throw new Error(`unexpected metadata: ${response.status}`)
}

/** The ways of calling, each built once as a program would. */
export const ways = [
  { name: "plain", call: Effect.map(Chat.create(chatRequest), checkCompletion) },
  {
    name: "withResponse",
    call: Effect.map(Switchboard.withResponse(Chat.create(chatRequest)), ([completion, response]) => {
      checkReply(response)
      checkCompletion(completion)
    })
  },
  {
    name: "onResponse hook",
    call: Effect.map(
      Chat.create(chatRequest).pipe(Switchboard.withRequestOptions({ onResponse: (response) => Effect.sync(() => checkReply(response)) })),
      checkCompletion
    )
  }
] as const

const main = async () => {
  const [port, rounds = 15, calls = 2_000] = process.argv.slice(2).map(Number)
  const runtime = await runtimeFor(port!)
  const until = deadline(600_000)
  const run = (call: (typeof ways)[number]["call"]) => pool(calls, 32, until, () => runtime.runPromise(call))
  try {
    // Warm-up: every path compiled before the first timed round.
    for (let i = 0; i < 2; i++) for (const { call } of ways) await run(call)
    const perCall: Record<string, Array<number>> = Object.fromEntries(ways.map(({ name }) => [name, []]))
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < ways.length; i++) {
        const { call, name } = ways[(round + i) % ways.length]!
        const before = process.cpuUsage()
        await run(call)
        const used = process.cpuUsage(before)
        perCall[name]!.push((used.user + used.system) / calls)
      }
    }
    process.stdout.write(`${JSON.stringify(perCall)}\n`)
  } finally {
    await runtime.dispose()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
